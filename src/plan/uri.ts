// Sources that Spark reads itself (`--engine spark`): a URI such as s3a://, hdfs://,
// gs://, abfss:// or file:, a glob among them. The binder takes their schema from
// Spark (LoadOptions.sparkSources) instead of reading Parquet footers here.
import type { FileColumn } from '../io/parquet.js';

const URI = /^[a-z][a-z0-9+.-]*:\/\//i;

/** A path Spark reads or writes itself: a URI (s3a://, hdfs://, gs://, abfss://, file:). */
export const isUri = (p: string) => URI.test(p) || p.startsWith('file:');

/** How the binder reaches Spark for the sources Spark reads itself (`--engine spark`). */
export interface SparkSources {
  /** the columns of a URI source, as Spark reads them; `workers` sizes a local Spark server if one must start */
  schema: (uri: string, workers: number) => Promise<FileColumn[]>;
  /** a local path or glob not found here is Spark's to find (a remote cluster may mount it), as a file: URI */
  missing: boolean;
  /** why a local path cannot be read (a remote server does not see this machine's files): refused, exit 2 */
  localRefused?: string;
}
