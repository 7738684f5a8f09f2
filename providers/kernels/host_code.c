#include "host_code.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cdnn_sdk/error.h>

/* Write all of bytes to fd, through short writes and interruptions. */
static int write_all(int fd, const uint8_t *bytes, size_t size)
{
    while (size > 0) {
        ssize_t n = write(fd, bytes, size);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        bytes += n;
        size -= (size_t)n;
    }
    return 0;
}

/* An anonymous memory file holding bytes, sealed so that nothing (not
 * even this process) can change it after the write. */
static cdnn_status_t sealed_memory_file(const uint8_t *bytes, size_t size,
                                        const char *kernel_id, int *fd)
{
    char name[96];
    snprintf(name, sizeof name, "cdnn-kernel:%.80s", kernel_id);
    *fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (*fd < 0)
        return sdk_fail(CDNN_STATUS_ALLOC_FAILED, "cannot make a memory file for "
                        "kernel %s: %s", kernel_id, strerror(errno));
    if (write_all(*fd, bytes, size) != 0 ||
        fcntl(*fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL)) {
        int saved = errno;
        close(*fd);
        return sdk_fail(CDNN_STATUS_ALLOC_FAILED, "cannot write kernel %s to a memory "
                        "file: %s", kernel_id, strerror(saved));
    }
    return CDNN_STATUS_SUCCESS;
}

/* The loader maps each segment of the object from the memory file; one
 * whose file bytes lie past the file's end maps pages with nothing behind
 * them, and the first access to them (the loader's own, relocating) is a
 * SIGBUS.  A payload's code object is checked against its SHA-256, but a
 * forger re-hashes what he truncates: so before dlopen, the object must be
 * a 64-bit little-endian x86-64 ELF whose program headers, and every
 * segment's file bytes, lie inside it. */
static cdnn_status_t check_elf_extents(const uint8_t *bytes, size_t size, const char *kernel_id)
{
    Elf64_Ehdr eh;
    Elf64_Phdr ph;
    if (size < sizeof eh)
        return sdk_fail(CDNN_STATUS_CORRUPT_DATA, "the code object of kernel %s does not "
                        "load: it is %zu bytes, shorter than an ELF header", kernel_id, size);
    memcpy(&eh, bytes, sizeof eh);
    if (memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0 || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
        eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_machine != EM_X86_64)
        return sdk_fail(CDNN_STATUS_CORRUPT_DATA, "the code object of kernel %s does not "
                        "load: it is not a 64-bit x86-64 ELF object", kernel_id);
    if (eh.e_phentsize != sizeof ph || eh.e_phoff > size ||
        (size - eh.e_phoff) / sizeof ph < eh.e_phnum)
        return sdk_fail(CDNN_STATUS_CORRUPT_DATA, "the code object of kernel %s does not "
                        "load: its %u program headers do not lie inside its %zu bytes", kernel_id, (unsigned)eh.e_phnum, size);
    for (unsigned i = 0; i < eh.e_phnum; i++) {
        memcpy(&ph, bytes + eh.e_phoff + (size_t)i * sizeof ph, sizeof ph);
        if (ph.p_offset > size || ph.p_filesz > size - ph.p_offset)
            return sdk_fail(CDNN_STATUS_CORRUPT_DATA, "the code object of kernel %s does not "
                            "load: its segment %u (%llu bytes at offset %llu) ends past its "
                            "%zu bytes (truncated?)", kernel_id, i,
                            (unsigned long long)ph.p_filesz,
                            (unsigned long long)ph.p_offset, size);
    }
    return CDNN_STATUS_SUCCESS;
}

/* glibc knows a loaded object by the name it was opened with before it
 * looks at the file: an object already loaded as "/proc/self/fd/N" would
 * be handed back for another memory file that got descriptor N.  Each
 * memory file therefore stays open while its object is loaded, so that no
 * two of ours share a name, and a name someone else loaded is refused. */
static cdnn_status_t check_name_free(const char *path, const char *kernel_id)
{
    void *loaded = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
    if (!loaded)
        return CDNN_STATUS_SUCCESS;
    dlclose(loaded);
    return sdk_fail(CDNN_STATUS_INTERNAL_ERROR, "cannot load kernel %s: an object named "
                    "%s is already loaded in this process", kernel_id, path);
}

cdnn_status_t host_code_load(const uint8_t *bytes, size_t size, const char *symbol,
                             const char *kernel_id, host_code_t *code)
{
    char path[64];
    *code = HOST_CODE_NONE;
    cdnn_status_t st = check_elf_extents(bytes, size, kernel_id);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    st = sealed_memory_file(bytes, size, kernel_id, &code->memory_file);
    if (st != CDNN_STATUS_SUCCESS)
        return st;
    snprintf(path, sizeof path, "/proc/self/fd/%d", code->memory_file);
    st = check_name_free(path, kernel_id);
    if (st != CDNN_STATUS_SUCCESS) {
        host_code_unload(code);
        return st;
    }
    code->library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!code->library) {
        st = sdk_fail(CDNN_STATUS_CORRUPT_DATA, "the code object of kernel %s does not "
                      "load: %s", kernel_id, dlerror());
        host_code_unload(code);
        return st;
    }
    code->entry = dlsym(code->library, symbol);
    if (!code->entry) {
        host_code_unload(code);
        return sdk_fail(CDNN_STATUS_CORRUPT_DATA, "the code object of kernel %s has no "
                        "symbol %s", kernel_id, symbol);
    }
    return CDNN_STATUS_SUCCESS;
}

void host_code_unload(host_code_t *code)
{
    if (code->library)
        dlclose(code->library);
    if (code->memory_file >= 0)
        close(code->memory_file);
    code->library = NULL;
    code->entry = NULL;
    code->memory_file = -1;
}
