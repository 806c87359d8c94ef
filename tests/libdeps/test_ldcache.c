/* The ld.so.cache parser: the real /etc/ld.so.cache agrees with
 * `ldconfig -p` (glibc's own reader); hand-built old-format and combined
 * files (layout from glibc dl-cache.h) give the entries put in; corrupt
 * caches give a message naming the file. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include "fixtures.h"
#include "validate/libdeps/ldcache.h"

static void test_real_cache_matches_ldconfig(void **state)
{
    (void)state;
    if (!fx_exists("/etc/ld.so.cache"))
        skip();
    aitk_ldcache c;
    aitk_str err = AITK_STR_INIT, out = AITK_STR_INIT;
    assert_int_equal(aitk_ldcache_load("/etc/ld.so.cache", &c, &err), AITK_OK);
    const char *argv[] = {"ldconfig", "-p", NULL};
    if (fx_run(argv, &out) != 0)
        skip();
    /* "N libs found in cache `/etc/ld.so.cache'" then "\tsoname (flags) => path". */
    unsigned long n = strtoul(out.ptr, NULL, 10);
    assert_int_equal(n, c.count);
    size_t lines = 0;
    for (const char *p = strchr(out.ptr, '\n'); p && p[1]; p = strchr(p + 1, '\n')) {
        const char *line = p + 1;
        size_t len = strcspn(line, "\n");
        const char *arrow = strstr(line, " => ");
        if (!arrow || arrow > line + len)
            continue;
        size_t name_len = strcspn(line + 1, " ");
        char *soname = aitk_strndup(line + 1, name_len);
        char *path = aitk_strndup(arrow + 4, (size_t)(line + len - arrow - 4));
        bool found = false;
        for (size_t i = 0; i < c.count && !found; i++)
            found = strcmp(c.entries[i].soname, soname) == 0 &&
                    strcmp(c.entries[i].path, path) == 0;
        if (!found)
            fail_msg("ldconfig lists %s => %s, the parser does not", soname, path);
        aitk_free(soname);
        aitk_free(path);
        lines++;
    }
    assert_int_equal(lines, c.count);
    aitk_ldcache_free(&c);
    aitk_str_free(&err);
    aitk_str_free(&out);
}

static void put32(aitk_str *b, uint32_t v)
{
    aitk_str_appendn(b, (const char *)&v, 4);
}

/* Old format: magic, count, entries, then the strings they point into
 * (offsets from the end of the entries). */
static void build_old(aitk_str *b)
{
    aitk_str_appendn(b, "ld.so-1.7.0\0", 12);
    put32(b, 2);
    const char strings[] = "libold.so.1\0/opt/old/libold.so.1\0libx.so.2\0/opt/x/libx.so.2\0";
    put32(b, 0x0303); put32(b, 0); put32(b, 12);
    put32(b, 0x0303); put32(b, 33); put32(b, 43);
    aitk_str_appendn(b, strings, sizeof strings - 1);
}

static void test_old_format(void **state)
{
    (void)state;
    aitk_str b = AITK_STR_INIT, err = AITK_STR_INIT;
    build_old(&b);
    aitk_ldcache c;
    assert_int_equal(aitk_ldcache_parse("old.cache", b.ptr, b.len, &c, &err), AITK_OK);
    assert_int_equal(c.format, 1);
    assert_int_equal(c.count, 2);
    assert_string_equal(aitk_ldcache_lookup(&c, "libx.so.2", 0x0303), "/opt/x/libx.so.2");
    assert_string_equal(aitk_ldcache_lookup(&c, "libold.so.1", 0x0303), "/opt/old/libold.so.1");
    assert_null(aitk_ldcache_lookup(&c, "libold.so.1", 0x0003)); /* i386 entry wanted */
    aitk_ldcache_free(&c);
    aitk_str_free(&b);
    aitk_str_free(&err);
}

static void test_combined_format(void **state)
{
    (void)state;
    aitk_str b = AITK_STR_INIT, err = AITK_STR_INIT;
    build_old(&b);
    while (b.len % 8)
        aitk_str_appendc(&b, '\0');
    size_t hdr = b.len;
    aitk_str_appendn(&b, "glibc-ld.so.cache1.1", 20);
    put32(&b, 1);          /* nlibs */
    put32(&b, 30);         /* len_strings */
    put32(&b, 0);          /* flags + padding */
    put32(&b, 0);          /* extension offset */
    put32(&b, 0); put32(&b, 0); put32(&b, 0);
    /* One entry; strings right after it, offsets from the new header. */
    uint32_t key = 48 + 24, value = key + 11;
    put32(&b, 0x0303); put32(&b, key); put32(&b, value); put32(&b, 0);
    put32(&b, 0); put32(&b, 0); /* hwcap */
    aitk_str_appendn(&b, "libnew.so\0\0/new/libnew.so\0", 26);
    (void)hdr;
    aitk_ldcache c;
    assert_int_equal(aitk_ldcache_parse("both.cache", b.ptr, b.len, &c, &err), AITK_OK);
    assert_int_equal(c.format, 3);
    assert_int_equal(c.count, 1);
    assert_string_equal(aitk_ldcache_lookup(&c, "libnew.so", 0x0303), "/new/libnew.so");
    aitk_ldcache_free(&c);
    aitk_str_free(&b);
    aitk_str_free(&err);
}

static void expect_error(const void *data, size_t len, const char *needle)
{
    aitk_ldcache c;
    aitk_str err = AITK_STR_INIT;
    assert_int_equal(aitk_ldcache_parse("bad.cache", data, len, &c, &err), AITK_E_PARSE);
    if (!strstr(aitk_str_cstr(&err), "bad.cache: ") || !strstr(aitk_str_cstr(&err), needle))
        fail_msg("message '%s' lacks the name or '%s'", aitk_str_cstr(&err), needle);
    assert_null(c.entries);
    aitk_str_free(&err);
}

static void test_corrupt(void **state)
{
    (void)state;
    expect_error("", 0, "empty file");
    expect_error("something else entirely", 23, "unknown magic");
    expect_error("glibc-ld.so.cache1.1", 20, "truncated header");
    aitk_str b = AITK_STR_INIT;
    build_old(&b);
    uint32_t huge = 0x10000000;
    memcpy(b.ptr + 12, &huge, 4);
    expect_error(b.ptr, b.len, "entry count");
    aitk_str_clear(&b);
    build_old(&b);
    uint32_t far = 0x100000;
    memcpy(b.ptr + 16 + 12 + 8, &far, 4); /* entry 1's path offset */
    expect_error(b.ptr, b.len, "entry 1: string offset");
    aitk_str_clear(&b);
    build_old(&b);
    b.len -= 1; /* the last string loses its NUL */
    expect_error(b.ptr, b.len, "unterminated");
    aitk_str_free(&b);
    /* Every truncation of the real cache: parsed or refused, never a crash. */
    size_t len = 0;
    unsigned char *real = fx_exists("/etc/ld.so.cache") ? fx_read("/etc/ld.so.cache", &len) : NULL;
    for (size_t cut = 0; real && cut < len; cut += 97) {
        aitk_ldcache c;
        aitk_str err = AITK_STR_INIT;
        aitk_status st = aitk_ldcache_parse("cut.cache", real, cut, &c, &err);
        assert_true(st == AITK_OK || st == AITK_E_PARSE);
        aitk_ldcache_free(&c);
        aitk_str_free(&err);
    }
    aitk_free(real);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_real_cache_matches_ldconfig),
        cmocka_unit_test(test_old_format),
        cmocka_unit_test(test_combined_format),
        cmocka_unit_test(test_corrupt),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
