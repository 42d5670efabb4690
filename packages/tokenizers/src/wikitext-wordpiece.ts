// WikiText under BERT WordPiece, as grassflow-lm trains on it: the text WordPiece sees, and decoded ids back as lines.

/**
 * WikiText `.tokens` text → what BERT WordPiece should see (grassflow-lm's choice, applied line by line):
 * - `<unk>` (the word-level corpus's out-of-vocabulary marker) → `[UNK]`, which WordPiece keeps as one special token
 * (id 100);
 * - the split markers ` @-@ `, ` @,@ `, ` @.@ ` → `-`, `,`, `.` (BERT splits on punctuation anyway, so `1 @,@ 000`
 *   and `1,000` give the same word pieces; removing the markers keeps `@` out of the ids);
 * - every non-blank line (a paragraph or a ` = heading = `) ends with `[SEP]` (id 102), as `<eos>` ends lines in
 *   the word-level corpus; blank lines give nothing.
 */
export function wikitextForWordPiece(text: string): string {
  return text.replace(/<unk>/g, '[UNK]').replace(/ @([-,.])@ /g, '$1');
}

/** Decoded WordPiece text (special tokens kept) with each `[SEP]`, which ends a line in training, as a line break. */
export function wordPieceLines(decoded: string): string {
  return decoded.replace(/\s*\[SEP\]\s*/g, '\n');
}
