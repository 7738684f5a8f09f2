/*
 * io.c -- reading files as hostile input, writing them atomically, and
 * writing strings from files safely as JSON or terminal text.
 */
#include "io.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

/* Read fd to its end, never holding more than the cap plus one byte (the
 * one that proves the file too big).  Returns 0 or an errno value. */
static int read_all(int fd, size_t hint, unsigned char **out, size_t *size)
{
    /* hint + 2: room for the file, its NUL, and the read that sees EOF. */
    size_t cap = hint + 2, n = 0;
    unsigned char *buf = malloc(cap);
    if (!buf)
        return ENOMEM;
    for (;;) {
        if (n + 1 == cap) {
            if (n > CLI_MAX_FILE_BYTES) {
                free(buf);
                return EFBIG;
            }
            size_t next = cap > CLI_MAX_FILE_BYTES / 2 ? CLI_MAX_FILE_BYTES + 2 : cap * 2;
            unsigned char *grown = realloc(buf, next);
            if (!grown) {
                free(buf);
                return ENOMEM;
            }
            buf = grown;
            cap = next;
        }
        ssize_t r = read(fd, buf + n, cap - 1 - n);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            int err = r < 0 ? errno : 0;
            if (err) {
                free(buf);
                return err;
            }
            break;
        }
        n += (size_t)r;
    }
    buf[n] = '\0';
    *out = buf;
    *size = n;
    return 0;
}

int cli_read_file(const char *cmd, const char *path, unsigned char **bytes,
                  size_t *size)
{
    *bytes = NULL;
    *size = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return cli_fail(cmd, "cannot open '%s': %s", path, strerror(errno));
    struct stat st;
    int err = fstat(fd, &st) != 0 ? errno : 0;
    /* A regular file's size is known up front; pipes and devices are read
     * until the cap. */
    size_t hint = !err && S_ISREG(st.st_mode) ? (size_t)st.st_size : 4096;
    if (!err && S_ISDIR(st.st_mode))
        err = EISDIR;
    else if (!err)
        err = hint > CLI_MAX_FILE_BYTES ? EFBIG : read_all(fd, hint, bytes, size);
    close(fd);
    if (err == EFBIG)
        return cli_fail(cmd, "'%s' is larger than the %zu MiB that cdnn reads", path,
                        CLI_MAX_FILE_BYTES >> 20);
    if (err)
        return cli_fail(cmd, "cannot read '%s': %s", path, strerror(err));
    return EXIT_OK;
}

/* "<dir>/.<name>.tmp-XXXXXX" for path "<dir>/<name>": in the same
 * directory, so that the rename is atomic (same file system). */
static char *temp_name(const char *path)
{
    const char *slash = strrchr(path, '/');
    size_t dir_len = slash ? (size_t)(slash - path) + 1 : 0;
    size_t n = strlen(path) + sizeof ".tmp-XXXXXX" + 1;
    char *tmp = malloc(n);
    if (tmp)
        snprintf(tmp, n, "%.*s.%s.tmp-XXXXXX", (int)dir_len, path, path + dir_len);
    return tmp;
}

static int write_all(int fd, const unsigned char *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return errno;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* mkstemp makes files 0600; an artifact gets the mode any new file would. */
static mode_t new_file_mode(void)
{
    mode_t mask = umask(0);
    umask(mask);
    return 0666 & ~mask;
}

/* Make the rename itself durable; failure here loses nothing written. */
static void sync_directory(const char *tmp)
{
    const char *slash = strrchr(tmp, '/');
    char dir[4096];
    snprintf(dir, sizeof dir, "%.*s", slash ? (int)(slash - tmp) + 1 : 1, slash ? tmp : ".");
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
}

int cli_write_file_atomic(const char *cmd, const char *path, const void *bytes,
                          size_t size)
{
    char *tmp = temp_name(path);
    if (!tmp)
        return cli_fail(cmd, "out of memory writing '%s'", path);
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0) {
        int err = errno;
        free(tmp);
        return cli_fail(cmd, "cannot create a temporary file beside '%s': %s", path,
                        strerror(err));
    }
    int err = write_all(fd, bytes, size);
    if (!err && fchmod(fd, new_file_mode()) != 0)
        err = errno;
    if (!err && fsync(fd) != 0)
        err = errno;
    if (close(fd) != 0 && !err)
        err = errno;
    if (!err && rename(tmp, path) != 0)
        err = errno;
    if (err)
        unlink(tmp);
    else
        sync_directory(tmp);
    free(tmp);
    return err ? cli_fail(cmd, "cannot write '%s': %s", path, strerror(err)) : EXIT_OK;
}

/* Length of the valid UTF-8 sequence at s (1-4), or 0 if it is not one:
 * no overlong forms, no surrogates, nothing above U+10FFFF. */
static int utf8_length(const unsigned char *s)
{
    unsigned c = s[0];
    int n = c < 0x80 ? 1 : c < 0xc2 ? 0 : c < 0xe0 ? 2 : c < 0xf0 ? 3 : c < 0xf5 ? 4 : 0;
    for (int i = 1; i < n; i++)
        if ((s[i] & 0xc0) != 0x80) /* also stops at the NUL */
            return 0;
    if (n == 3 && ((c == 0xe0 && s[1] < 0xa0) || (c == 0xed && s[1] >= 0xa0)))
        return 0;
    if (n == 4 && ((c == 0xf0 && s[1] < 0x90) || (c == 0xf4 && s[1] >= 0x90)))
        return 0;
    return n;
}

void cli_json_string(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    fputc('"', f);
    while (*p) {
        int n = utf8_length(p);
        if (n == 0) {
            fputs("\\ufffd", f);
            p++;
        } else if (*p == '"' || *p == '\\') {
            fprintf(f, "\\%c", *p++);
        } else if (*p < 0x20) {
            fprintf(f, "\\u%04x", *p++);
        } else {
            fwrite(p, 1, (size_t)n, f);
            p += n;
        }
    }
    fputc('"', f);
}

void cli_text_string(FILE *f, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        fputc(*p < 0x20 || *p == 0x7f ? '?' : *p, f);
}
