// Globs through tinyglobby, loaded only for a path that may be a pattern or
// names a folder: with picomatch it is ~90 KB for every run to parse otherwise.
type Tinyglobby = typeof import('tinyglobby');
let lib: Promise<Tinyglobby> | null = null;
const tinyglobby = (): Promise<Tinyglobby> => (lib ??= import('tinyglobby'));

/** Characters without which tinyglobby never calls a path a pattern (picomatch's glob, extglob and escape syntax). */
const MAYBE = /[*?[\]{}()!+@\\]/;

/** Whether `p` is a glob pattern, as tinyglobby's isDynamicPattern says; the library is not loaded for a plain path. */
export async function isPattern(p: string): Promise<boolean> {
  return MAYBE.test(p) && (await tinyglobby()).isDynamicPattern(p);
}

/** The files a pattern (or, with `cwd`, a pattern under that folder) matches: absolute paths, sorted. */
export async function globFiles(pattern: string, cwd?: string): Promise<string[]> {
  const found = await (await tinyglobby()).glob(
    pattern,
    cwd === undefined
      ? { absolute: true, onlyFiles: true, expandDirectories: false }
      : { cwd, absolute: true, onlyFiles: true },
  );
  return found.sort();
}
