#define _GNU_SOURCE
#include <pthread.h>
#include <unistd.h>

#include "gf_pool.h"
#include "grassflow_native.h"

#define MAX_THREADS 64

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/* One call at a time uses the pool: two JS threads of one process (worker_threads) share this library. */
static pthread_mutex_t call_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
static pthread_cond_t done = PTHREAD_COND_INITIALIZER;
static int threads = 0;  /* pool size, calling thread included; 0 = not set yet */
static int started = 0;  /* worker threads running */
static long generation = 0;
static int pending = 0;  /* workers still on the current call */
static gf_task current_task;
static void *current_ctx;
static int current_parts;

/* The generation when each worker was started: it takes part in every call after it, and in none before. */
static long born[MAX_THREADS];

static void *worker(void *arg) {
  int part = (int)(long)arg;
  pthread_mutex_lock(&lock);
  long seen = born[part];
  for (;;) {
    while (generation == seen) pthread_cond_wait(&wake, &lock);
    seen = generation;
    gf_task task = current_task;
    void *ctx = current_ctx;
    int parts = current_parts;
    pthread_mutex_unlock(&lock);
    if (part < parts) task(ctx, part, parts);
    pthread_mutex_lock(&lock);
    if (--pending == 0) pthread_cond_signal(&done);
  }
  return NULL;
}

int gf_set_threads(int n) {
  if (n < 1) n = (int)sysconf(_SC_NPROCESSORS_ONLN);
  if (n < 1) n = 1;
  if (n > MAX_THREADS) n = MAX_THREADS;
  pthread_mutex_lock(&call_lock); /* not while a call runs */
  pthread_mutex_lock(&lock);
  /* Workers are started once and never stopped: a smaller count leaves the extra ones asleep. */
  while (started < n - 1) {
    pthread_t t;
    born[started + 1] = generation;
    if (pthread_create(&t, NULL, worker, (void *)(long)(started + 1)) != 0) break;
    pthread_detach(t);
    started++;
  }
  threads = started + 1 < n ? started + 1 : n;
  pthread_mutex_unlock(&lock);
  pthread_mutex_unlock(&call_lock);
  return threads;
}

int gf_get_threads(void) {
  if (threads == 0) gf_set_threads(0);
  return threads;
}

int gf_parts(long work, long grain) {
  int t = gf_get_threads();
  long p = work / grain;
  if (p < 1) return 1;
  return p < t ? (int)p : t;
}

void gf_parallel(gf_task task, void *ctx, int parts) {
  if (parts <= 1 || gf_get_threads() <= 1) {
    task(ctx, 0, 1);
    return;
  }
  pthread_mutex_lock(&call_lock);
  if (parts > threads) parts = threads;
  pthread_mutex_lock(&lock);
  current_task = task;
  current_ctx = ctx;
  current_parts = parts;
  pending = started;
  generation++;
  pthread_cond_broadcast(&wake);
  pthread_mutex_unlock(&lock);
  task(ctx, 0, parts);
  pthread_mutex_lock(&lock);
  while (pending > 0) pthread_cond_wait(&done, &lock);
  pthread_mutex_unlock(&lock);
  pthread_mutex_unlock(&call_lock);
}
