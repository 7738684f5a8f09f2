/*
 * io.h -- files and text as the cdnn command reads and writes them.
 *
 * Every file the command reads may be hostile: it is read whole, up to a
 * size cap, and only then handed to the library's verifying loaders.
 * Every file it writes appears whole or not at all, so that an
 * interrupted or failed command never leaves a half-written artifact that a
 * later load would reject (or, worse, a truncated one that a fleet ships).
 */
#ifndef CDNN_TOOLS_IO_H
#define CDNN_TOOLS_IO_H

#include <stddef.h>
#include <stdio.h>

/* The largest file the command reads: far above any graph or plan, far
 * below what would let a hostile file exhaust memory. */
#define CLI_MAX_FILE_BYTES ((size_t)1 << 30)

/**
 * Read the file at path whole into *bytes (malloc'd, NUL-terminated so that
 * text can be parsed in place; *size excludes the NUL).  Files over
 * CLI_MAX_FILE_BYTES are refused.  On failure prints
 * "cdnn: <cmd>: ..." to stderr and returns EXIT_FAILED; else EXIT_OK.
 */
int cli_read_file(const char *cmd, const char *path, unsigned char **bytes,
                  size_t *size);

/**
 * Write bytes to path atomically: into a temporary file in path's
 * directory, fsync'd, then renamed over path.  On failure the temporary
 * file is removed, path is untouched, a message is printed as above and
 * EXIT_FAILED returned.
 */
int cli_write_file_atomic(const char *cmd, const char *path, const void *bytes,
                          size_t size);

/**
 * Write s to f as a JSON string literal.  Strings in a plan come from a
 * file, so anything that is not valid UTF-8 is written as U+FFFD: the
 * output always parses.
 */
void cli_json_string(FILE *f, const char *s);

/**
 * Write s to f for a terminal: control characters (which a hostile file
 * could use to rewrite the screen) are written as '?'.
 */
void cli_text_string(FILE *f, const char *s);

#endif
