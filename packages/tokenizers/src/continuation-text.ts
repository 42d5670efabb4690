// The text of a prompt and the tokens a model continues it with, whole or piece by piece as they are sampled.

/** What {@link continuationText} needs of a tokenizer: its decode, and its token strings when it has word pieces. */
export interface Detokenizer {
  decode(ids: ArrayLike<number>): string;
  /** The token of an id (WordPiece: '##' marks a piece that continues the word before it); absent: no pieces. */
  idToToken?(id: number): string | undefined;
}

/** WordPiece's mark of a piece that continues the word before it. */
const CONTINUATION = '##';

/**
 * The prompt's text and its continuation's. The text of all the ids, '##' pieces joined to the word before as the
 * tokenizer split them, except at the prompt's end: the prompt's last word is the one the user typed, so a '##' piece
 * sampled right after it starts a new word ("the history of" + "##vic" is "the history of vic", not "ofvic").
 */
export function continuationText(tok: Detokenizer, prompt: ArrayLike<number>, ids: ArrayLike<number>): string {
  const all = Array.from(prompt).concat(Array.from(ids));
  const text = tok.decode(all);
  const first = ids.length > 0 ? tok.idToToken?.(ids[0] as number) : undefined;
  if (prompt.length === 0 || first === undefined || !first.startsWith(CONTINUATION)) return text;
  const head = tok.decode(prompt);
  return text.startsWith(head) ? `${head} ${text.slice(head.length)}` : text;
}

/**
 * {@link continuationText} piece by piece: `promptText` first, then `push(id)` for each sampled id returns the text
 * it adds (may be empty). The pieces joined are continuationText of the prompt and every id pushed.
 */
export class ContinuationStream {
  readonly promptText: string;
  private readonly ids: number[] = [];
  private shown: string;

  constructor(
    private readonly tok: Detokenizer,
    private readonly prompt: ArrayLike<number>,
  ) {
    this.promptText = tok.decode(prompt);
    this.shown = this.promptText;
  }

  /** The text `id` adds. A decode that rewrites earlier text (a tokenizer's clean-up) adds nothing until it agrees. */
  push(id: number): string {
    this.ids.push(id);
    const text = continuationText(this.tok, this.prompt, this.ids);
    if (!text.startsWith(this.shown)) return '';
    const piece = text.slice(this.shown.length);
    this.shown = text;
    return piece;
  }

  /** Everything shown so far: the prompt's text and the pieces returned. */
  get text(): string {
    return this.shown;
  }
}
