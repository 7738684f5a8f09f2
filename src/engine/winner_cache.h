/*
 * winner_cache.h -- what benchmarking chose, remembered across processes.
 *
 * One append-only file, $CDNN_CACHE_DIR/winners.v1 (default
 * ~/.cache/cdnn), one record per line (docs/FORMATS.md section 5a):
 *
 *   <first 16 hex digits of SHA-256(json)> <json>\n
 *   json = {"v":2,"key":"<graph content key>","device":"<device key>",
 *           "lib":"<library version>","knobs":"<engine knobs: name=value,...>",
 *           "ranking":[{"c":"<candidate>","us":t,"clock":"device"|"host"},...]}
 *
 * "knobs" holds the build's engine knobs sorted by name ("" for none; a
 * record without it was made with none): they change what a candidate
 * runs, so a ranking made under other values is not used.  "clock" says
 * whose clock timed the candidate; v1 records (no "clock") are read as
 * host-timed, except for CUDA devices, whose v1 times may be the enqueue's.
 *
 * Writers append whole lines with one write() under an exclusive flock, on
 * the file the path names once they hold the lock, so processes writing at
 * once lose no record; a line whose checksum or JSON does not hold is
 * skipped with a warning.  The last record for a key wins.  A read that
 * finds more dead records (superseded, damaged) than live ones compacts
 * the file: its live lines, written beside it and renamed over it under
 * the lock.  $CDNN_DISABLE_CACHE=1 turns the cache off.  Failures to read
 * or write the cache are logged and never fail a build or an execute.
 */
#ifndef CDNN_ENGINE_WINNER_CACHE_H
#define CDNN_ENGINE_WINNER_CACHE_H

#include "engine/plan.h"

int winner_cache_enabled(void);

/**
 * The index of the plan's candidate that a cached record ranks first among
 * the plan's candidates, if the record ranks every one of them; else -1.
 * Only the candidates' labels are read: they need no contexts yet.
 * Compacts the file when the read finds it mostly dead.
 */
int32_t winner_cache_lookup(const plan_t *plan);

/**
 * The lookup's decision on cache text already read (hostile: any bytes):
 * what winner_cache_lookup returns for a file holding text.  source names
 * it in warnings.  Separate so that it can be fuzzed without files.
 */
int32_t winner_cache_choose(const char *text, size_t size, const plan_t *plan,
                            const char *source);

/** Append the ranking of a plan that has just chosen. */
void winner_cache_record(const plan_t *plan);

#endif
