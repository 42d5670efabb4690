/* A small pthread pool: gf_parallel(task, ctx, parts) runs task(ctx, part, parts) for part = 0 … parts − 1, part 0 on
 * the calling thread. Its workers sleep on a condition variable between calls (they never spin), so they leave the
 * cores to OpenBLAS's threads while a product runs: the two pools take turns. */
#ifndef GF_POOL_H
#define GF_POOL_H
typedef void (*gf_task)(void *ctx, int part, int parts);
void gf_parallel(gf_task task, void *ctx, int parts);
/* Parts for `work` units of work: 1 below `grain` units a thread (a thread's wake-up costs more), else the pool. */
int gf_parts(long work, long grain);
#endif
