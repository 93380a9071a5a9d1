// What an output format's encoder is (io/result-file.ts drives one; io/result-binary.ts holds the Parquet and Arrow
// ones): a leaf, so the encoders and the file that picks them do not import each other.
import type { Batch } from '../kernels/column.js';
import type { EncodedRowGroup } from './parquet-encode.js';

/** A format's encoder: gets the batches in order, writes bytes with `out`. */
export interface Encoder {
  write(b: Batch): Promise<void> | void;
  /** Parquet only: row groups encoded by the tasks (physical/exchange/encode-output.ts), after the rows before them */
  writeEncoded?(g: EncodedRowGroup): void;
  finish(): Promise<void> | void;
  /** stop early (the query failed): release what the encoder holds */
  cancel(): void;
}

export type Out = (bytes: Uint8Array | string) => void;
