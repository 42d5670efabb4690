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

/** Tokens a stream decodes again on each push once it has left the prompt: its window is KEEP to 2·KEEP ids long. */
const KEEP = 8;

/**
 * {@link continuationText} piece by piece: `promptText` first, then `push(id)` for each sampled id returns the text
 * it adds (may be empty). The pieces joined are continuationText of the prompt and every id pushed.
 *
 * A push costs a decode of a short window, not of everything so far (which made n tokens cost O(n²)): past the first
 * ids, each piece is the growth of the window's text, decode(ids[p…n]) beyond decode(ids[p…n−1]). That equals the
 * growth of the whole text wherever a tokenizer's decode joins and cleans up tokens by their neighbours only (WordPiece
 * with BERT's clean-up does), and the window moves only to a start whose text the text shown so far ends with.
 */
export class ContinuationStream {
  readonly promptText: string;
  private readonly ids: number[] = [];
  private shown: string;
  /** The window's first id (an index into ids), or -1 while pieces are read off the whole text. */
  private start = -1;
  /** decode(ids[start…]) as of the last piece returned. */
  private windowText = '';

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
    const whole = this.start < 0;
    const text = whole
      ? continuationText(this.tok, this.prompt, this.ids)
      : this.tok.decode(this.ids.slice(this.start));
    const before = whole ? this.shown : this.windowText;
    if (!text.startsWith(before)) return '';
    const piece = text.slice(before.length);
    this.shown += piece;
    if (!whole) this.windowText = text;
    const length = this.ids.length - Math.max(this.start, 0);
    if (length >= 2 * KEEP && length % KEEP === 0) this.moveWindow(); // tried every KEEP ids, as it may not move
    return piece;
  }

  /** Start the window KEEP ids back, at an id that begins a word, if the text shown ends with the window's text. */
  private moveWindow(): void {
    for (let at = this.ids.length - KEEP; at > Math.max(this.start, 0); at--) {
      if (this.tok.idToToken?.(this.ids[at] as number)?.startsWith(CONTINUATION)) continue;
      const text = this.tok.decode(this.ids.slice(at));
      if (!this.shown.endsWith(text)) continue;
      this.start = at;
      this.windowText = text;
      return;
    }
  }

  /** Everything shown so far: the prompt's text and the pieces returned. */
  get text(): string {
    return this.shown;
  }
}
