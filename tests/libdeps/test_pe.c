/* The PE reader against the mingw-built fixtures: import lists agree with
 * x86_64-w64-mingw32-objdump -p (an independent reader), the delay-load
 * import, machine, version resource and exports are what the fixture script
 * built, and corrupt files give a message naming the file, never a crash. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "fixtures.h"
#include "validate/libdeps/pe.h"

static int need_pe_fixtures(void **state)
{
    (void)state;
    if (!fx_exists(FX_TORCH "/fbgemm.dll")) {
        fprintf(stderr, "PE fixtures not built (no mingw-w64): skipping\n");
        exit(77);
    }
    return 0;
}

/* "DLL Name: X" lines of objdump -p, in order. */
static void objdump_imports(const char *path, aitk_str *names)
{
    aitk_str out = AITK_STR_INIT;
    const char *argv[] = {"x86_64-w64-mingw32-objdump", "-p", path, NULL};
    assert_int_equal(fx_run(argv, &out), 0);
    for (const char *p = out.ptr; (p = strstr(p, "DLL Name: "));) {
        p += 10;
        size_t n = strcspn(p, "\r\n");
        aitk_str_appendn(names, p, n);
        aitk_str_append(names, "\n");
    }
    aitk_str_free(&out);
}

/* "DLL|function" lines from objdump -p's import tables (by-name imports). */
static void objdump_symbols(const char *path, aitk_str *lines)
{
    aitk_str out = AITK_STR_INIT;
    const char *argv[] = {"x86_64-w64-mingw32-objdump", "-p", path, NULL};
    assert_int_equal(fx_run(argv, &out), 0);
    char dll[256] = "";
    for (const char *line = out.ptr; line && *line;) {
        size_t len = strcspn(line, "\n");
        char buf[512];
        snprintf(buf, sizeof buf, "%.*s", (int)len, line);
        char a[256], b[256], c[256];
        if (sscanf(buf, " DLL Name: %255s", a) == 1)
            snprintf(dll, sizeof dll, "%s", a);
        else if (len == 0)
            dll[0] = '\0';
        else if (dll[0] && sscanf(buf, " %255s %255s %255s", a, b, c) == 3 &&
                 strcmp(a, "vma:") != 0)
            aitk_str_appendf(lines, "%s|%s\n", dll, c);
        line += len + (line[len] != '\0');
    }
    aitk_str_free(&out);
}

static void test_symbols_match_objdump(void **state)
{
    (void)state;
    const char *files[] = {"c10.dll", "fbgemm.dll", "caffe2_nvrtc.dll"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        aitk_str path = AITK_STR_INIT, ours = AITK_STR_INIT, theirs = AITK_STR_INIT,
                 err = AITK_STR_INIT;
        aitk_str_appendf(&path, "%s/%s", FX_TORCH, files[i]);
        aitk_pe_info pe;
        assert_int_equal(aitk_pe_read_file(path.ptr, AITK_PE_READ_SYMBOLS, &pe, &err), AITK_OK);
        for (size_t k = 0; k < pe.import_count; k++)
            for (size_t j = 0; j < pe.imports[k].symbol_count; j++)
                aitk_str_appendf(&ours, "%s|%s\n", pe.imports[k].dll, pe.imports[k].symbols[j]);
        objdump_symbols(path.ptr, &theirs);
        assert_true(theirs.len > 0);
        if (strcmp(aitk_str_cstr(&ours), aitk_str_cstr(&theirs)) != 0)
            fail_msg("%s\nours:\n%s\nobjdump:\n%s", files[i], aitk_str_cstr(&ours),
                     aitk_str_cstr(&theirs));
        aitk_pe_info_free(&pe);
        aitk_str_free(&path);
        aitk_str_free(&ours);
        aitk_str_free(&theirs);
        aitk_str_free(&err);
    }
}

static void test_imports_match_objdump(void **state)
{
    (void)state;
    const char *files[] = {"fbgemm.dll", "c10.dll", "torch_cpu.dll", "torch_cuda.dll",
                           "libiomp5md.dll"};
    for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
        aitk_str path = AITK_STR_INIT, ours = AITK_STR_INIT, theirs = AITK_STR_INIT,
                 err = AITK_STR_INIT;
        aitk_str_appendf(&path, "%s/%s", FX_TORCH, files[i]);
        aitk_pe_info pe;
        assert_int_equal(aitk_pe_read_file(path.ptr, 0, &pe, &err), AITK_OK);
        for (size_t k = 0; k < pe.import_count; k++)
            if (!pe.imports[k].delay)
                aitk_str_appendf(&ours, "%s\n", pe.imports[k].dll);
        objdump_imports(path.ptr, &theirs);
        assert_true(theirs.len > 0);
        assert_string_equal(aitk_str_cstr(&ours), aitk_str_cstr(&theirs));
        assert_int_equal(pe.machine, AITK_PE_MACHINE_AMD64);
        assert_true(pe.pe32plus);
        aitk_pe_info_free(&pe);
        aitk_str_free(&path);
        aitk_str_free(&ours);
        aitk_str_free(&theirs);
        aitk_str_free(&err);
    }
}

static bool has_import(const aitk_pe_info *pe, const char *name, bool delay)
{
    for (size_t k = 0; k < pe->import_count; k++)
        if (strcmp(pe->imports[k].dll, name) == 0 && pe->imports[k].delay == delay)
            return true;
    return false;
}

static void test_fixture_facts(void **state)
{
    (void)state;
    aitk_pe_info pe;
    aitk_str err = AITK_STR_INIT;
    /* fbgemm.dll was linked against libomp140.x86_64.dll and vcruntime140.dll. */
    assert_int_equal(aitk_pe_read_file(FX_TORCH "/fbgemm.dll", 0, &pe, &err), AITK_OK);
    assert_true(has_import(&pe, "libomp140.x86_64.dll", false));
    assert_true(has_import(&pe, "vcruntime140.dll", false));
    aitk_pe_info_free(&pe);
    /* torch_cpu.dll: cudnn64_9.dll through the delay-load table only. */
    assert_int_equal(aitk_pe_read_file(FX_TORCH "/torch_cpu.dll", 0, &pe, &err), AITK_OK);
    assert_true(has_import(&pe, "cudnn64_9.dll", true));
    assert_false(has_import(&pe, "cudnn64_9.dll", false));
    aitk_pe_info_free(&pe);
    /* Version resources written by windres. */
    assert_int_equal(aitk_pe_read_file(FX_TORCH "/libiomp5md.dll", 0, &pe, &err), AITK_OK);
    assert_non_null(pe.file_version);
    assert_string_equal(pe.file_version, "5.0.2023.1");
    aitk_pe_info_free(&pe);
    assert_int_equal(aitk_pe_read_file(FX "/pe/env/Library/bin/libiomp5md.dll", 0, &pe, &err),
                     AITK_OK);
    assert_string_equal(pe.file_version, "5.0.2019.1");
    aitk_pe_info_free(&pe);
    /* Exports (asked for) of c10.dll hold the function the fixture defines. */
    assert_int_equal(aitk_pe_read_file(FX_TORCH "/c10.dll", AITK_PE_READ_EXPORTS, &pe, &err),
                     AITK_OK);
    bool found = false;
    for (size_t k = 0; k < pe.export_count; k++)
        found |= strcmp(pe.exports[k], "c10_fn") == 0;
    assert_true(found);
    aitk_pe_info_free(&pe);
    aitk_str_free(&err);
}

/* Function names have no length limit in the loader: MSVC-mangled C++
 * names in torch_cpu.dll run to 3,199 bytes. A 3,301-byte name is read
 * whole on both sides, exported and imported (a 1,024-byte cap made the
 * healthy torch 2.4.1 DLLs read as CORRUPT). */
static void test_long_names(void **state)
{
    (void)state;
    char want[3302];
    want[0] = 'L';
    memset(want + 1, 'x', 3300);
    want[3301] = '\0';
    aitk_pe_info pe;
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(aitk_pe_read_file(FX "/pe/longname/longname.dll", AITK_PE_READ_EXPORTS, &pe,
                                       &err), AITK_OK);
    assert_int_equal(pe.export_count, 1);
    assert_string_equal(pe.exports[0], want);
    aitk_pe_info_free(&pe);
    assert_int_equal(aitk_pe_read_file(FX "/pe/longname/longuse.dll", AITK_PE_READ_SYMBOLS, &pe,
                                       &err), AITK_OK);
    bool seen = false;
    for (size_t k = 0; k < pe.import_count; k++)
        if (strcmp(pe.imports[k].dll, "longname.dll") == 0) {
            assert_int_equal(pe.imports[k].symbol_count, 1);
            assert_string_equal(pe.imports[k].symbols[0], want);
            seen = true;
        }
    assert_true(seen);
    assert_string_equal(aitk_str_cstr(&err), "");
    aitk_pe_info_free(&pe);
    aitk_str_free(&err);
}

static void test_32bit_dll(void **state)
{
    (void)state;
    if (fx_exists(FX "/pe/no-i686"))
        skip();
    aitk_pe_info pe;
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(aitk_pe_read_file(FX_TORCH "/zlibwapi.dll", 0, &pe, &err), AITK_OK);
    assert_int_equal(pe.machine, AITK_PE_MACHINE_I386);
    assert_false(pe.pe32plus);
    unsigned m = 0;
    assert_int_equal(aitk_pe_peek(FX_TORCH "/zlibwapi.dll", &m, &err), AITK_OK);
    assert_int_equal(m, AITK_PE_MACHINE_I386);
    aitk_pe_info_free(&pe);
    aitk_str_free(&err);
}

static void expect_parse_error(const unsigned char *data, size_t len, const char *needle)
{
    aitk_pe_info pe;
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(aitk_pe_read_mem("broken.dll", data, len,
                                      AITK_PE_READ_EXPORTS | AITK_PE_READ_SYMBOLS, &pe, &err),
                     AITK_E_PARSE);
    assert_non_null(strstr(aitk_str_cstr(&err), "broken.dll: "));
    if (needle && !strstr(aitk_str_cstr(&err), needle))
        fail_msg("message '%s' lacks '%s'", aitk_str_cstr(&err), needle);
    assert_null(pe.imports);
    aitk_str_free(&err);
}

static void test_corrupt_inputs(void **state)
{
    (void)state;
    expect_parse_error((const unsigned char *)"", 0, "empty file");
    expect_parse_error((const unsigned char *)"ZM", 2, "not a PE file");
    size_t len = 0;
    unsigned char *dll = fx_read(FX_TORCH "/fbgemm.dll", &len);
    assert_non_null(dll);
    /* Every truncation either parses (the imports came before the cut) or
     * fails with a message; ASan checks that none reads past the end. */
    for (size_t cut = 0; cut < len; cut += 7) {
        unsigned char *part = aitk_malloc(cut ? cut : 1);
        memcpy(part, dll, cut);
        aitk_pe_info pe;
        aitk_str err = AITK_STR_INIT;
        aitk_status st = aitk_pe_read_mem("cut.dll", part, cut,
                                          AITK_PE_READ_EXPORTS | AITK_PE_READ_SYMBOLS, &pe, &err);
        if (st) {
            assert_int_equal(st, AITK_E_PARSE);
            assert_non_null(strstr(aitk_str_cstr(&err), "cut.dll: "));
        }
        aitk_pe_info_free(&pe);
        aitk_str_free(&err);
        aitk_free(part);
    }
    /* Cut inside the headers, down to the MZ alone: cut short, not "not a
     * PE file"; the file ends inside what its DOS header describes. */
    const size_t stubs[] = {0x90, 0x40, 2};
    for (size_t i = 0; i < sizeof stubs / sizeof *stubs; i++) {
        aitk_pe_info pe;
        aitk_str err = AITK_STR_INIT;
        assert_int_equal(aitk_pe_read_mem("stub.dll", dll, stubs[i], 0, &pe, &err), AITK_OK);
        assert_true(pe.truncated);
        assert_true(pe.described_size > stubs[i]);
        aitk_pe_info_free(&pe);
        aitk_str_free(&err);
    }
    /* A damaged DOS header is damage, said so: e_lfanew past the end, or
     * beyond what Windows accepts; and no PE header where it points. */
    unsigned char *hdr = aitk_malloc(len);
    memcpy(hdr, dll, len);
    const uint32_t lfanews[] = {0x7ffffff0u, (uint32_t)len + 16, 0};
    const char *says[] = {"corrupt DOS header: e_lfanew 0x7ffffff0 points beyond what Windows",
                          "points past the end of the file", "e_lfanew 0x0): a DOS program, or"};
    for (size_t i = 0; i < 3; i++) {
        memcpy(hdr + 0x3c, &lfanews[i], 4);
        expect_parse_error(hdr, len, says[i]);
    }
    aitk_free(hdr);
    /* Import directory RVA pointing far outside the file. */
    uint32_t lfanew;
    memcpy(&lfanew, dll + 0x3c, 4);
    unsigned char *bad = aitk_malloc(len);
    memcpy(bad, dll, len);
    uint32_t far = 0x7ffff000u;
    memcpy(bad + lfanew + 24 + 112 + 8, &far, 4);
    expect_parse_error(bad, len, "lies outside the file");
    /* Random bytes behind a valid MZ/PE prefix and with none at all. */
    uint64_t seed = 42;
    for (int round = 0; round < 200; round++) {
        size_t n = 64 + fx_rand(&seed) % 4096;
        unsigned char *r = aitk_malloc(n);
        for (size_t k = 0; k < n; k++)
            r[k] = (unsigned char)fx_rand(&seed);
        if (round % 2) {
            size_t keep = n < 0x200 ? n : 0x200;
            memcpy(r, dll, keep < len ? keep : len);
        }
        aitk_pe_info pe;
        aitk_str err = AITK_STR_INIT;
        aitk_status st = aitk_pe_read_mem("random.dll", r, n,
                                          AITK_PE_READ_EXPORTS | AITK_PE_READ_SYMBOLS, &pe, &err);
        assert_true(st == AITK_OK || st == AITK_E_PARSE);
        if (st)
            assert_non_null(strstr(aitk_str_cstr(&err), "random.dll: "));
        aitk_pe_info_free(&pe);
        aitk_str_free(&err);
        aitk_free(r);
    }
    aitk_free(bad);
    aitk_free(dll);
}

/* A half-copied DLL keeps every header and may keep its import table, so
 * it read as whole; the section table says how long it should be. */
static void test_truncated(void **state)
{
    (void)state;
    size_t len = 0;
    unsigned char *dll = fx_read(FX_TORCH "/fbgemm.dll", &len);
    assert_non_null(dll);
    aitk_pe_info pe;
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(aitk_pe_read_mem("whole.dll", dll, len, 0, &pe, &err), AITK_OK);
    assert_false(pe.truncated);
    assert_true(pe.import_count > 0);
    aitk_pe_info_free(&pe);
    assert_int_equal(aitk_pe_read_mem("half.dll", dll, len / 2, 0, &pe, &err), AITK_OK);
    assert_true(pe.truncated);
    assert_int_equal(pe.file_size, len / 2);
    assert_true(pe.described_size > len / 2 && pe.described_size <= len);
    assert_int_equal(pe.machine, AITK_PE_MACHINE_AMD64);
    assert_int_equal(pe.import_count, 0);
    aitk_pe_info_free(&pe);
    aitk_str_free(&err);
    aitk_free(dll);
}

static void test_out_of_memory(void **state)
{
    (void)state;
    /* Each allocation in turn fails: NOMEM comes back, nothing leaks (ASan). */
    for (long n = 0; n < 80; n++) {
        aitk_pe_info pe;
        aitk_str err = AITK_STR_INIT;
        aitk_alloc_fail_after(n);
        aitk_status st = aitk_pe_read_file(FX_TORCH "/torch_cpu.dll",
                                           AITK_PE_READ_EXPORTS | AITK_PE_READ_SYMBOLS, &pe, &err);
        aitk_alloc_fail_after(-1);
        assert_true(st == AITK_OK || st == AITK_E_NOMEM);
        aitk_pe_info_free(&pe);
        aitk_str_free(&err);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_imports_match_objdump),
        cmocka_unit_test(test_symbols_match_objdump),
        cmocka_unit_test(test_fixture_facts),
        cmocka_unit_test(test_32bit_dll),
        cmocka_unit_test(test_long_names),
        cmocka_unit_test(test_corrupt_inputs),
        cmocka_unit_test(test_truncated),
        cmocka_unit_test(test_out_of_memory),
    };
    return cmocka_run_group_tests(tests, need_pe_fixtures, NULL);
}
