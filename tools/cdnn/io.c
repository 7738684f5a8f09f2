/*
 * io.c -- reading files as hostile input, writing them atomically, and
 * writing strings from files safely as JSON or terminal text.
 */
#include "io.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
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
        return cli_fail(cmd, CDNN_STATUS_IO_ERROR,
                        "cannot open '%s': %s", path, strerror(errno));
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
        return cli_fail(cmd, CDNN_STATUS_NOT_SUPPORTED,
                        "'%s' is larger than the %zu MiB that cdnn reads", path,
                        CLI_MAX_FILE_BYTES >> 20);
    if (err)
        return cli_fail(cmd, CDNN_STATUS_IO_ERROR,
                        "cannot read '%s': %s", path, strerror(err));
    return EXIT_OK;
}

/* ---- writing ------------------------------------------------------------- */

/* Symbolic links followed before a chain is taken for a loop (Linux's own
 * limit for one path). */
#define MAX_LINK_HOPS 40

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

/* The length of path's directory part, its last '/' included (0: none). */
static size_t dir_length(const char *path)
{
    const char *slash = strrchr(path, '/');
    return slash ? (size_t)(slash - path) + 1 : 0;
}

/* What the symbolic link at link points to, as a path usable from here: a
 * relative target is relative to the link's directory.  NULL with errno. */
static char *link_target(const char *link)
{
    char target[PATH_MAX];
    ssize_t n = readlink(link, target, sizeof target);
    if (n < 0)
        return NULL;
    if ((size_t)n == sizeof target) {
        errno = ENAMETOOLONG;
        return NULL;
    }
    size_t dir = target[0] == '/' ? 0 : dir_length(link);
    char *joined = malloc(dir + (size_t)n + 1);
    if (!joined)
        return NULL;
    memcpy(joined, link, dir);
    memcpy(joined + dir, target, (size_t)n);
    joined[dir + (size_t)n] = '\0';
    return joined;
}

/* The path a write to path lands on: path itself or, through any chain of
 * symbolic links, the last one's target, so that a rename replaces the
 * target and the link stays a link.  NULL with errno on failure. */
static char *final_target(const char *path)
{
    char *current = strdup(path);
    for (int hops = 0; current && hops <= MAX_LINK_HOPS; hops++) {
        struct stat st;
        if (lstat(current, &st) != 0 || !S_ISLNK(st.st_mode))
            return current; /* what is (or is not) there is the caller's to judge */
        char *next = link_target(current);
        free(current);
        current = next;
    }
    if (current) {
        free(current);
        errno = ELOOP;
    }
    return NULL;
}

/* "<dir>/.<name>.tmp-XXXXXX" for path "<dir>/<name>": in the same
 * directory, so that the rename is atomic (same file system). */
static char *temp_name(const char *path)
{
    size_t dir = dir_length(path);
    size_t n = strlen(path) + sizeof ".tmp-XXXXXX" + 1;
    char *tmp = malloc(n);
    if (tmp)
        snprintf(tmp, n, "%.*s.%s.tmp-XXXXXX", (int)dir, path, path + dir);
    return tmp;
}

/* mkstemp makes files 0600; an artifact gets the mode any new file would. */
static mode_t new_file_mode(void)
{
    mode_t mask = umask(0);
    umask(mask);
    return 0666 & ~mask;
}

/* The temporary file takes over from old (NULL: nothing was there): its
 * owner when root (only root can give a file away), then its mode (a
 * chown may clear set-id bits, so the mode comes second). */
static int take_over_attributes(int fd, const struct stat *old)
{
    if (old && geteuid() == 0 && fchown(fd, old->st_uid, old->st_gid) != 0)
        return errno;
    return fchmod(fd, old ? old->st_mode & 07777 : new_file_mode()) != 0 ? errno : 0;
}

/* Make the rename itself durable; failure here loses nothing written. */
static void sync_directory(const char *path)
{
    size_t dir = dir_length(path);
    char *name = dir ? strndup(path, dir) : strdup(".");
    int fd = name ? open(name, O_RDONLY | O_DIRECTORY | O_CLOEXEC) : -1;
    if (fd >= 0) {
        (void)fsync(fd);
        close(fd);
    }
    free(name);
}

/* Write a regular file (or a new one) at target: temporary file, fsync,
 * rename.  path is what the user named, for messages. */
static int replace_file(const char *cmd, const char *path, const char *target,
                        const struct stat *old, const void *bytes, size_t size)
{
    /* Renaming needs only the directory's permission; a file that a plain
     * write could not change is left alone, as a plain write would. */
    if (old && faccessat(AT_FDCWD, target, W_OK, AT_EACCESS) != 0)
        return cli_fail(cmd, CDNN_STATUS_IO_ERROR,
                        "cannot write '%s': %s", path, strerror(errno));
    char *tmp = temp_name(target);
    if (!tmp)
        return cli_fail(cmd, CDNN_STATUS_ALLOC_FAILED, "out of memory writing '%s'", path);
    int fd = mkostemp(tmp, O_CLOEXEC);
    if (fd < 0) {
        int err = errno;
        free(tmp);
        return cli_fail(cmd, CDNN_STATUS_IO_ERROR,
                        "cannot create a temporary file beside '%s': %s (a file is "
                        "written beside its final name and renamed, so its "
                        "directory must be writable)", target, strerror(err));
    }
    int err = write_all(fd, bytes, size);
    if (!err)
        err = take_over_attributes(fd, old);
    if (!err && fsync(fd) != 0)
        err = errno;
    if (close(fd) != 0 && !err)
        err = errno;
    if (!err && rename(tmp, target) != 0)
        err = errno;
    if (err)
        unlink(tmp);
    else
        sync_directory(target);
    free(tmp);
    return err ? cli_fail(cmd, CDNN_STATUS_IO_ERROR,
                          "cannot write '%s': %s", path, strerror(err)) : EXIT_OK;
}

/* A connection to the stream socket at path (a socket cannot be open()ed). */
static int connect_socket(const char *path)
{
    struct sockaddr_un addr = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof addr.sun_path) {
        errno = ENAMETOOLONG;
        return -1;
    }
    strcpy(addr.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && connect(fd, (const struct sockaddr *)&addr, sizeof addr) != 0) {
        int err = errno;
        close(fd);
        errno = err;
        return -1;
    }
    return fd;
}

/* A device, FIFO or socket: written to as it is; replacing it with a file
 * would break whatever reads it.  (A FIFO's open waits for a reader.) */
static int write_through(const char *cmd, const char *path, const char *target,
                         const struct stat *st, const void *bytes, size_t size)
{
    int fd = S_ISSOCK(st->st_mode) ? connect_socket(target)
                                   : open(target, O_WRONLY | O_NOCTTY | O_CLOEXEC);
    if (fd < 0)
        return cli_fail(cmd, CDNN_STATUS_IO_ERROR,
                        "cannot open '%s' for writing: %s", path, strerror(errno));
    int err = write_all(fd, bytes, size);
    if (close(fd) != 0 && !err)
        err = errno;
    return err ? cli_fail(cmd, CDNN_STATUS_IO_ERROR,
                          "cannot write '%s': %s", path, strerror(err)) : EXIT_OK;
}

static int write_stdout(const char *cmd, const void *bytes, size_t size)
{
    fflush(stdout); /* nothing buffered may land after the artifact */
    int err = write_all(STDOUT_FILENO, bytes, size);
    return err ? cli_fail(cmd, CDNN_STATUS_IO_ERROR,
                          "cannot write to standard output: %s", strerror(err))
               : EXIT_OK;
}

int cli_write_output(const char *cmd, const char *path, const void *bytes, size_t size)
{
    if (strcmp(path, CLI_STDOUT) == 0)
        return write_stdout(cmd, bytes, size);
    char *target = final_target(path);
    if (!target)
        return cli_fail(cmd, CDNN_STATUS_IO_ERROR,
                        "cannot write '%s': %s", path, strerror(errno));
    struct stat st;
    int exists = stat(target, &st) == 0, rc;
    if (!exists && errno != ENOENT)
        rc = cli_fail(cmd, CDNN_STATUS_IO_ERROR,
                      "cannot write '%s': %s", path, strerror(errno));
    else if (!exists || S_ISREG(st.st_mode))
        rc = replace_file(cmd, path, target, exists ? &st : NULL, bytes, size);
    else if (S_ISDIR(st.st_mode))
        rc = cli_fail(cmd, CDNN_STATUS_IO_ERROR,
                      "cannot write '%s': it is a directory; give the path of a "
                      "file to write (or - for standard output)", path);
    else
        rc = write_through(cmd, path, target, &st, bytes, size);
    free(target);
    return rc;
}

FILE *cli_report_stream(const char *path)
{
    return strcmp(path, CLI_STDOUT) == 0 ? stderr : stdout;
}

/* ---- strings from files ----------------------------------------------------- */

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

double cli_now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}
