// Hash table from UTF-8 byte spans to word ids: lookups read the input bytes in place, allocating nothing.

/** FNV-1a 32-bit hash of bytes[start, end). */
function fnv1a(bytes: Uint8Array, start: number, end: number): number {
  let h = 0x811c9dc5;
  for (let i = start; i < end; i++) h = Math.imul(h ^ bytes[i]!, 0x01000193);
  return h >>> 0;
}

/**
 * Open-addressing (linear probing) map from words, held as UTF-8 bytes, to the ids 0, 1, 2, … in insertion
 * order. `find` compares the bytes of the input span with the stored word, so encoding a text needs no
 * string per token. Load factor ≤ 1/2.
 */
export class WordIndex {
  private keys = new Uint8Array(1 << 16); // all words' bytes, back to back
  private keyEnd = 0;
  private starts = new Int32Array(1024); // id → start in keys
  private lengths = new Int32Array(1024); // id → byte length
  private hashes = new Uint32Array(1024); // id → hash, kept for rehashing
  private slots = new Int32Array(2048); // id + 1, or 0 when empty
  private mask = 2047;
  /** Number of words. */
  size = 0;

  /** Id of the word bytes[start, end), or −1. */
  find(bytes: Uint8Array, start: number, end: number): number {
    const len = end - start;
    let slot = fnv1a(bytes, start, end) & this.mask;
    for (;;) {
      const entry = this.slots[slot]!;
      if (entry === 0) return -1;
      const id = entry - 1;
      if (this.lengths[id] === len) {
        const keyStart = this.starts[id]!;
        let i = 0;
        while (i < len && this.keys[keyStart + i] === bytes[start + i]) i++;
        if (i === len) return id;
      }
      slot = (slot + 1) & this.mask;
    }
  }

  /** Id of the word bytes[start, end), adding it with the next id when absent. */
  add(bytes: Uint8Array, start: number, end: number): number {
    const found = this.find(bytes, start, end);
    if (found >= 0) return found;
    const id = this.size;
    const len = end - start;
    if (id === this.starts.length) {
      this.starts = growInt32(this.starts);
      this.lengths = growInt32(this.lengths);
      const h = new Uint32Array(this.hashes.length * 2);
      h.set(this.hashes);
      this.hashes = h;
    }
    if (this.keyEnd + len > this.keys.length) {
      const k = new Uint8Array(Math.max(this.keys.length * 2, this.keyEnd + len));
      k.set(this.keys);
      this.keys = k;
    }
    this.keys.set(bytes.subarray(start, end), this.keyEnd);
    this.starts[id] = this.keyEnd;
    this.lengths[id] = len;
    this.hashes[id] = fnv1a(bytes, start, end);
    this.keyEnd += len;
    this.size = id + 1;
    if (this.size * 2 > this.slots.length) this.rehash(this.slots.length * 2);
    else this.place(id);
    return id;
  }

  private place(id: number): void {
    let slot = this.hashes[id]! & this.mask;
    while (this.slots[slot] !== 0) slot = (slot + 1) & this.mask;
    this.slots[slot] = id + 1;
  }

  private rehash(capacity: number): void {
    this.slots = new Int32Array(capacity);
    this.mask = capacity - 1;
    for (let id = 0; id < this.size; id++) this.place(id);
  }
}

function growInt32(a: Int32Array<ArrayBuffer>): Int32Array<ArrayBuffer> {
  const b = new Int32Array(a.length * 2);
  b.set(a);
  return b;
}
