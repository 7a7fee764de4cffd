/**
 * The stop flags of SQLite calls: slots of one shared buffer, one per call
 * in flight, rather than a SharedArrayBuffer (a backing store of its own,
 * freed only when both threads have collected it) per call. The main thread
 * sets a call's flag to stop it; the worker's progress handler reads it.
 *
 * @module
 */

const FLAG_SLOTS = 4096;
const flagBuffer = new SharedArrayBuffer(4 * FLAG_SLOTS);
const freeFlags: number[] = Array.from({ length: FLAG_SLOTS }, (_, i) => i);

/** A cleared flag; `slot` is null for one made apart when every slot is taken. */
export function takeFlag(): { flag: Int32Array; slot: number | null } {
  const slot = freeFlags.pop();
  if (slot === undefined) {
    return { flag: new Int32Array(new SharedArrayBuffer(4)), slot: null };
  }
  const flag = new Int32Array(flagBuffer, slot * 4, 1);
  Atomics.store(flag, 0, 0);
  return { flag, slot };
}

/** Hand a flag's slot out again (never one a stopped call's worker may still read). */
export function freeFlag(slot: number | null): void {
  if (slot !== null) freeFlags.push(slot);
}
