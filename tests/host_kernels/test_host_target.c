/*
 * test_host_target.c -- which objects a CPU may run, and what the objects
 * are made of.
 *   - host_target.h's decision on made-up CPUs (no AVX-512, no AVX2, AVX2
 *     without FMA, nothing) and on this one (against the compiler's own
 *     __builtin_cpu_supports);
 *   - with a CPU that lacks AVX-512, the loader opens no x86-64-v4 object:
 *     afterwards none of them is mapped into the process;
 *   - every object is an x86-64 ELF shared object that needs no library
 *     (no DT_NEEDED), imports no symbol and exports exactly its entry,
 *     cdnn_host_<name> (hermetic builds only: sanitized objects import
 *     the sanitizer runtime).
 */
#include <dlfcn.h>
#include <elf.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "../../kernels/host/host_target.h"
#include "hk_util.h"

#define MAX_OBJECTS 64

static void test_decision_on_made_up_cpus(void **state)
{
    (void)state;
    const uint32_t zen3 = CDNN_HOST_CPU_V3; /* AVX2, FMA, no AVX-512 */
    assert_true(cdnn_host_target_runs("x86-64-v2", zen3));
    assert_true(cdnn_host_target_runs("x86-64-v3", zen3));
    assert_false(cdnn_host_target_runs("x86-64-v4", zen3));
    const uint32_t nehalem = CDNN_HOST_CPU_V2;
    assert_true(cdnn_host_target_runs("x86-64-v2", nehalem));
    assert_false(cdnn_host_target_runs("x86-64-v3", nehalem));
    assert_false(cdnn_host_target_runs("x86-64-v4", nehalem));
    const uint32_t no_fma = CDNN_HOST_CPU_V3 & ~(uint32_t)CDNN_HOST_CPU_FMA;
    assert_false(cdnn_host_target_runs("x86-64-v3", no_fma));
    /* AVX-512 bits without the rest of v3 do not make a v4 CPU */
    const uint32_t odd = CDNN_HOST_CPU_V2 | CDNN_HOST_CPU_AVX512;
    assert_false(cdnn_host_target_runs("x86-64-v4", odd));
    assert_true(cdnn_host_target_runs("x86-64-v4", CDNN_HOST_CPU_V4));
    assert_false(cdnn_host_target_runs("x86-64-v2", 0));
    assert_false(cdnn_host_target_runs("sm_90a", CDNN_HOST_CPU_V4));
    assert_false(cdnn_host_target_runs("x86-64", CDNN_HOST_CPU_V4));
    assert_false(cdnn_host_target_runs("", CDNN_HOST_CPU_V4));
}

/* The CPUID reading agrees with libgcc's (which also checks XCR0). */
static void test_decision_on_this_cpu(void **state)
{
    (void)state;
    __builtin_cpu_init();
    uint32_t f = cdnn_host_cpu_features();
    int avx512 = __builtin_cpu_supports("avx512f") &&
                 __builtin_cpu_supports("avx512bw") &&
                 __builtin_cpu_supports("avx512cd") &&
                 __builtin_cpu_supports("avx512dq") &&
                 __builtin_cpu_supports("avx512vl");
    int v3 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
             __builtin_cpu_supports("bmi") && __builtin_cpu_supports("bmi2");
    int v2 = __builtin_cpu_supports("sse4.2") &&
             __builtin_cpu_supports("popcnt");
    assert_int_equal(cdnn_host_target_runs("x86-64-v2", f), v2);
    assert_int_equal(cdnn_host_target_runs("x86-64-v3", f), v2 && v3);
    assert_int_equal(cdnn_host_target_runs("x86-64-v4", f),
                     v2 && v3 && avx512);
    printf("this CPU: x86-64-v2 %s, x86-64-v3 %s, x86-64-v4 %s\n",
           v2 ? "yes" : "no", v2 && v3 ? "yes" : "no",
           v2 && v3 && avx512 ? "yes" : "no");
}

/* On a CPU without AVX-512 the v4 objects are refused before dlopen, so
 * they are never mapped (RTLD_NOLOAD finds none of them afterwards). */
static void test_v4_not_loaded_without_avx512(void **state)
{
    (void)state;
    hk_object_t objects[MAX_OBJECTS];
    int skipped;
    int count = hk_load_objects_for("", CDNN_HOST_CPU_V3, objects,
                                    MAX_OBJECTS, &skipped);
    for (int i = 0; i < count; i++)
        assert_string_not_equal(objects[i].level, "x86-64-v4");
    char list[4096];
    snprintf(list, sizeof list, "%s", hk_object_list());
    int v4 = 0;
    for (char *save, *item = strtok_r(list, ",", &save); item;
         item = strtok_r(NULL, ",", &save)) {
        if (!strstr(item, ".x86-64-v4"))
            continue;
        v4++;
        char path[512];
        snprintf(path, sizeof path, "%s/%s.so", HOST_KERNEL_DIR, item);
        void *h = dlopen(path, RTLD_NOW | RTLD_NOLOAD);
        if (h)
            fail_msg("%s was loaded for a CPU without AVX-512", path);
    }
    assert_int_equal(skipped, v4);
    hk_unload_objects(objects, count);
}

/* ------------------------------------------------------------------------
 * The objects' ELF
 * ------------------------------------------------------------------------ */

static unsigned char *read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    assert_non_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *bytes = malloc((size_t)n);
    assert_int_equal(fread(bytes, 1, (size_t)n, f), (size_t)n);
    fclose(f);
    *size = (size_t)n;
    return bytes;
}

static const Elf64_Shdr *section_of_type(const unsigned char *elf, size_t size,
                                         uint32_t type)
{
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)elf;
    assert_true(eh->e_shoff + (size_t)eh->e_shnum * sizeof(Elf64_Shdr) <= size);
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(elf + eh->e_shoff);
    for (int i = 0; i < eh->e_shnum; i++)
        if (sh[i].sh_type == type)
            return &sh[i];
    return NULL;
}

static void check_elf(const char *path, const char *entry)
{
    size_t size;
    unsigned char *elf = read_file(path, &size);
    const Elf64_Ehdr *eh = (const Elf64_Ehdr *)elf;
    assert_memory_equal(eh->e_ident, ELFMAG, SELFMAG);
    assert_int_equal(eh->e_ident[EI_CLASS], ELFCLASS64);
    assert_int_equal(eh->e_type, ET_DYN);
    assert_int_equal(eh->e_machine, EM_X86_64);
    const Elf64_Shdr *dyn = section_of_type(elf, size, SHT_DYNAMIC);
    assert_non_null(dyn);
    for (const Elf64_Dyn *d = (const Elf64_Dyn *)(elf + dyn->sh_offset);
         d->d_tag != DT_NULL; d++)
        if (d->d_tag == DT_NEEDED)
            fail_msg("%s needs a library", path);
    const Elf64_Shdr *sh = (const Elf64_Shdr *)(elf + eh->e_shoff);
    const Elf64_Shdr *dynsym = section_of_type(elf, size, SHT_DYNSYM);
    assert_non_null(dynsym);
    const char *names = (const char *)(elf + sh[dynsym->sh_link].sh_offset);
    const Elf64_Sym *sym = (const Elf64_Sym *)(elf + dynsym->sh_offset);
    int exported = 0;
    for (size_t i = 1; i < dynsym->sh_size / sizeof *sym; i++) {
        if (sym[i].st_shndx == SHN_UNDEF)
            fail_msg("%s imports %s", path, names + sym[i].st_name);
        if (ELF64_ST_BIND(sym[i].st_info) != STB_LOCAL) {
            assert_string_equal(names + sym[i].st_name, entry);
            exported++;
        }
    }
    assert_int_equal(exported, 1);
    free(elf);
}

static void test_objects_are_hermetic(void **state)
{
    (void)state;
    if (!HOST_KERNEL_HERMETIC)
        skip(); /* sanitized objects import their runtime */
    char list[4096];
    snprintf(list, sizeof list, "%s", hk_object_list());
    int checked = 0;
    for (char *save, *item = strtok_r(list, ",", &save); item;
         item = strtok_r(NULL, ",", &save)) {
        char path[512], entry[96];
        snprintf(path, sizeof path, "%s/%s.so", HOST_KERNEL_DIR, item);
        *strchr(item, '.') = '\0';
        snprintf(entry, sizeof entry, "cdnn_host_%s", item);
        check_elf(path, entry);
        checked++;
    }
    assert_true(checked > 0);
    printf("%d objects: no DT_NEEDED, no import, one export each\n", checked);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_decision_on_made_up_cpus),
        cmocka_unit_test(test_decision_on_this_cpu),
        cmocka_unit_test(test_v4_not_loaded_without_avx512),
        cmocka_unit_test(test_objects_are_hermetic),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
