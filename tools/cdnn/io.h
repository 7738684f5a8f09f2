/*
 * io.h -- files and text as the cdnn command reads and writes them.
 *
 * Every file the command reads may be hostile: it is read whole, up to a
 * size cap, and only then handed to the library's verifying loaders.
 * Every file it writes appears whole or not at all, so that an
 * interrupted or failed command never leaves a half-written artifact that a
 * later load would reject (or, worse, a truncated one that a fleet ships);
 * what is not a file (a device, a FIFO, stdout) is written to, never
 * replaced by a file.
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

/* The -o argument that means standard output. */
#define CLI_STDOUT "-"

/**
 * Write an artifact to the output named by path, so that nothing that was
 * there is lost to a failed or interrupted command:
 *   - a regular file, or a path where nothing is: the bytes go to a
 *     temporary file in the same directory, fsync'd and renamed over path.
 *     A file that was there keeps its mode (and, when run as root, its
 *     owner and group); a new one gets mode 0666 & ~umask.  A file that
 *     could not be written in place is not replaced either;
 *   - a symbolic link: followed, and its final target written as above;
 *     the link stays a link;
 *   - a character or block device, a FIFO or a socket, and CLI_STDOUT:
 *     written through with plain writes, never replaced;
 *   - a directory: refused.
 * On failure the temporary file is removed, a file that was there is
 * untouched, "cdnn: <cmd>: ..." is printed and EXIT_FAILED returned.
 */
int cli_write_output(const char *cmd, const char *path, const void *bytes, size_t size);

/**
 * Where a command writing to path prints what it reports: stdout, or
 * stderr when path is CLI_STDOUT, so that the artifact on stdout is never
 * mixed with text.
 */
FILE *cli_report_stream(const char *path);

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
