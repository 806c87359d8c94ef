/* Loader emulation. Linux: the fixture trees resolve by the rule the
 * fixture was built to exercise, and every path ldd (the real loader) prints
 * for fixtures and real system libraries is the path the tree resolves.
 * Windows: the torch-2.4.0-shaped tree breaks exactly at libomp140, with the
 * folders in torch's order, and no system DLL is reported missing. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <strings.h>
#ifndef _WIN32
#include <dlfcn.h>
#endif

#include "fixtures.h"
#include "validate/libdeps/render.h"
#include "validate/libdeps/tree.h"

static aitk_dep_tree analyze(const aitk_deps_opts *o, const char *path)
{
    aitk_deps *d = NULL;
    aitk_str err = AITK_STR_INIT;
    aitk_dep_tree t;
    assert_int_equal(aitk_deps_new(o, &d, &err), AITK_OK);
    if (aitk_deps_analyze(d, path, &t, &err) != AITK_OK)
        fail_msg("%s", aitk_str_cstr(&err));
    aitk_deps_free(d);
    aitk_str_free(&err);
    return t;
}

static const aitk_dep_node *node(const aitk_dep_tree *t, const char *name)
{
    for (size_t i = 1; i < t->count; i++)
        if (strcmp(t->nodes[i].name, name) == 0 && !t->nodes[i].repeat)
            return &t->nodes[i];
    fail_msg("no node %s", name);
    return NULL;
}

#ifndef _WIN32
/* The real loader's word on `path` (dlopen, RTLD_NOW, then closed): "" when
 * it loads, else its error text (valid until the next dlopen). */
static const char *loader_says(const char *path)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    const char *why = h ? "" : dlerror();
    if (h)
        dlclose(h);
    return why;
}
#endif

static void test_linux_fixture_rules(void **state)
{
    (void)state;
    aitk_deps_opts o = {.ld_library_path = ""};
    aitk_dep_tree t = analyze(&o, FX "/elf/chain/libtop.so");
    const aitk_dep_node *mid = node(&t, "libmid.so.1"), *leaf = node(&t, "libleaf.so.1");
    assert_string_equal(mid->path, FX "/elf/chain/sub/libmid.so.1");
    assert_string_equal(mid->how, "DT_RUNPATH of libtop.so");
    assert_string_equal(leaf->path, FX "/elf/chain/sub/leafdir/libleaf.so.1");
    assert_string_equal(leaf->how, "DT_RUNPATH of libmid.so.1");
    assert_int_equal(aitk_dep_tree_problems(&t), 0);
    aitk_dep_tree_free(&t);

    /* libr2 is found through libold's DT_RPATH although libr1 asked for it. */
    t = analyze(&o, FX "/elf/rpath/libold.so");
    assert_string_equal(node(&t, "libr2.so")->how, "DT_RPATH of libold.so");
    aitk_dep_tree_free(&t);

    /* d32's 32-bit libdual.so is skipped and recorded; d64's is used. */
    t = analyze(&o, FX "/elf/wrongclass/libuser.so");
    const aitk_dep_node *dual = node(&t, "libdual.so");
    assert_int_equal(dual->state, AITK_DEP_FOUND);
    assert_string_equal(dual->path, FX "/elf/wrongclass/d64/libdual.so");
    assert_int_equal(dual->skipped.count, 1);
    assert_non_null(strstr(dual->skipped.items[0], "d32/libdual.so (ELF 32-bit i386"));
    aitk_dep_tree_free(&t);

    t = analyze(&o, FX "/elf/missing/libneedsgone.so");
    const aitk_dep_node *gone = node(&t, "libgone.so.1");
    assert_int_equal(gone->state, AITK_DEP_NOT_FOUND);
    assert_null(gone->path);
    assert_true(gone->searched.count >= 2);
    assert_string_equal(gone->searched.items[0], "/etc/ld.so.cache");
    assert_int_equal(aitk_dep_tree_problems(&t), 1);
    aitk_dep_tree_free(&t);

    t = analyze(&o, FX "/elf/glibc/libtoonew.so");
    const aitk_dep_node *libc = node(&t, "libc.so.6");
    assert_int_equal(libc->state, AITK_DEP_BAD_VERSION);
    assert_non_null(strstr(libc->detail, "GLIBC_2.99"));
    assert_int_equal(aitk_dep_tree_problems(&t), 1);
    aitk_dep_tree_free(&t);
}

/* Another release of a library with the same soname and version name
 * (make_fixtures.sh, symver/): v2/libsv.so.1, searched first, has version
 * AITK_SV_1 but not aitk_sv_bar, which libsvuse.so binds to it. The version
 * check passes; the symbol is what ld.so misses. A weak binding
 * (aitk_sv_opt, also absent from v2) is no error. With v1 first, nothing is
 * missing. The real loader is the witness each time. */
static void test_versioned_symbol_of_another_release(void **state)
{
    (void)state;
    aitk_deps_opts o = {.ld_library_path = ""};
    aitk_dep_tree t = analyze(&o, FX "/elf/symver/libsvuse.so");
    const aitk_dep_node *sv = node(&t, "libsv.so.1");
    assert_int_equal(sv->state, AITK_DEP_MISSING_SYMBOL);
    assert_string_equal(sv->path, FX "/elf/symver/v2/libsv.so.1");
    assert_string_equal(sv->detail,
                        "libsvuse.so needs aitk_sv_bar@AITK_SV_1, which " FX
                        "/elf/symver/v2/libsv.so.1 does not define: it is another release of "
                        "libsv.so.1 than the one libsvuse.so was built against, with the same "
                        "version name (ld.so: undefined symbol: aitk_sv_bar, version AITK_SV_1)");
    assert_int_equal(aitk_dep_tree_problems(&t), 1);
    aitk_dep_tree_free(&t);

    t = analyze(&o, FX "/elf/symver/libsvweak.so");
    assert_int_equal(node(&t, "libsv.so.1")->state, AITK_DEP_FOUND);
    assert_int_equal(aitk_dep_tree_problems(&t), 0);
    aitk_dep_tree_free(&t);

    aitk_deps_opts v1 = {.ld_library_path = FX "/elf/symver/v1"};
    t = analyze(&v1, FX "/elf/symver/libsvuse.so");
    sv = node(&t, "libsv.so.1");
    assert_int_equal(sv->state, AITK_DEP_FOUND);
    assert_string_equal(sv->path, FX "/elf/symver/v1/libsv.so.1");
    assert_int_equal(aitk_dep_tree_problems(&t), 0);
    aitk_dep_tree_free(&t);
#ifndef _WIN32
    assert_non_null(strstr(loader_says(FX "/elf/symver/libsvuse.so"),
                           "undefined symbol: aitk_sv_bar, version AITK_SV_1"));
    assert_string_equal(loader_says(FX "/elf/symver/libsvweak.so"), "");
#endif
}

/* A root with no SONAME that its dependency needs back by file name
 * (make_fixtures.sh, nosoname/ and found/): ld.so does not match the
 * name with the root's base name, it searches for it; libB.so has no
 * search path, so libA.so is not found (the walk used to call it "the root
 * itself, already loaded": 0 problems). Where libB.so's RUNPATH leads to
 * the root's own file, ld.so reuses the root. The real loader is the
 * witness. */
static void test_root_without_soname_needed_by_name(void **state)
{
    (void)state;
    aitk_deps_opts o = {.ld_library_path = ""};
    aitk_dep_tree t = analyze(&o, FX "/elf/nosoname/X/libA.so");
    const aitk_dep_node *a = node(&t, "libA.so");
    assert_int_equal(a->state, AITK_DEP_NOT_FOUND);
    assert_null(a->path);
    assert_string_equal(t.nodes[a->parent].name, "libB.so");
    assert_int_equal(aitk_dep_tree_problems(&t), 1);
    aitk_dep_tree_free(&t);

    t = analyze(&o, FX "/elf/found/X/libA.so");
    a = NULL;
    for (size_t i = 1; i < t.count; i++)
        if (strcmp(t.nodes[i].name, "libA.so") == 0)
            a = &t.nodes[i];
    assert_non_null(a);
    assert_int_equal(a->state, AITK_DEP_FOUND);
    assert_true(a->repeat);
    assert_string_equal(a->how, "DT_RUNPATH of libB.so");
    assert_int_equal(aitk_dep_tree_problems(&t), 0);
    aitk_dep_tree_free(&t);
#ifndef _WIN32
    assert_non_null(strstr(loader_says(FX "/elf/nosoname/X/libA.so"),
                           "libA.so: cannot open shared object file"));
    assert_string_equal(loader_says(FX "/elf/found/X/libA.so"), "");
#endif
}

/* A Git LFS pointer under the soname, in the first RUNPATH folder, with the
 * real library in the second: ld.so stops at the pointer, so the walk must
 * too (it used to skip it and report the real copy: 0 problems). The real
 * loader is the witness: loading the requester fails on that file. */
static void test_non_elf_candidate_ends_the_search(void **state)
{
    (void)state;
    aitk_deps_opts o = {.ld_library_path = ""};
    aitk_dep_tree t = analyze(&o, FX "/elf/lfsdep/libuser.so");
    const aitk_dep_node *ptr = node(&t, "libptr.so.1");
    assert_int_equal(ptr->state, AITK_DEP_BAD_FILE);
    assert_string_equal(ptr->path, FX "/elf/lfsdep/lfs/libptr.so.1");
    assert_string_equal(ptr->how, "DT_RUNPATH of libuser.so");
    assert_int_equal(ptr->not_library, AITK_DEP_OTHER_LFS_POINTER);
    assert_false(ptr->refused);
    assert_non_null(strstr(ptr->detail, "Git LFS pointer"));
    assert_int_equal(ptr->skipped.count, 0);
    assert_int_equal(ptr->duplicates.count, 1);
    assert_non_null(strstr(ptr->duplicates.items[0], FX "/elf/lfsdep/real/libptr.so.1"));
    assert_int_equal(aitk_dep_tree_problems(&t), 1);
    aitk_dep_tree_free(&t);
#ifndef _WIN32
    assert_non_null(strstr(loader_says(FX "/elf/lfsdep/libuser.so"), "lfs/libptr.so.1"));
#endif
}

/* What else ld.so refuses at the first file of the name, each with bad/
 * searched before real/ (the real loader is the witness): an ELF of the
 * other byte order, a relocatable object and a PE file end the load there; a symbolic
 * link loop ends the RUNPATH list, so real/ is not reached either. A flipped
 * byte-order flag, a wrong e_phentsize and a DT_STRTAB outside every load
 * segment are damage (CORRUPT), each said in ld.so's words where it has them. */
static void test_refused_candidates(void **state)
{
    (void)state;
    static const struct {
        const char *kind, *loader; /* the fixture, and what dlopen says ("" it loads) */
        bool bad_file;             /* the walk stops at the candidate */
        bool corrupt;              /* damage, not a kind of file ld.so refuses */
    } cases[] = {{"endian", "ELF file data encoding not little-endian", true, true},
                 {"rel", "only ET_DYN and ET_EXEC can be loaded", true, false},
                 {"loop", "cannot open shared object file", false, false},
                 {"pe", "invalid ELF header", true, false},
                 {"exec", "cannot dynamically load executable", true, false},
                 {"pie", "cannot dynamically load position-independent executable", true, false},
                 {"abiver", "ELF file ABI version invalid", true, false},
                 {"notdir", "", false, false},
                 {"phent", "ELF file's phentsize not the expected size", true, true},
                 /* ld.so would block reading it: our words, and no dlopen. */
                 {"fifo", "a FIFO (named pipe): ld.so would wait on it", true, false},
                 /* ld.so reads the names from unmapped memory and crashes:
                  * our words; the loader is the witness in test_load (a
                  * child process), not here. */
                 {"strtab", "DT_STRTAB 0x7ffffff0 lies in no loadable segment", true, true}};
    aitk_deps_opts o = {.ld_library_path = ""};
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        char root[512];
        snprintf(root, sizeof root, FX "/elf/refused/%s/libuser.so", cases[i].kind);
        aitk_dep_tree t = analyze(&o, root);
        const aitk_dep_node *n = node(&t, "libref.so.1");
        /* One problem: the file in bad/, or none found for the loop; none
         * at all when bad/ is no folder (real/'s copy is used). */
        const bool loads = !*cases[i].loader;
        const bool where_ok = cases[i].bad_file ? n->path && strstr(n->path, "/bad/")
                              : loads           ? n->path && strstr(n->path, "/real/")
                                                : !n->path;
        if (aitk_dep_tree_problems(&t) != (loads ? 0u : 1u) || !where_ok)
            fail_msg("%s: %zu problems, path %s", cases[i].kind, aitk_dep_tree_problems(&t),
                     n->path ? n->path : "(none)");
        if (cases[i].bad_file) {
            assert_int_equal(n->state, AITK_DEP_BAD_FILE);
            assert_non_null(strstr(n->detail, cases[i].loader));
            /* Named for what it is when it is no ELF file at all. */
            if (strcmp(cases[i].kind, "pe") == 0)
                assert_non_null(strstr(n->detail, "a PE (Windows) file (ld.so: invalid ELF"));
            assert_int_equal(n->duplicates.count, 1); /* real/'s copy, never reached */
            /* No library of any kind is "not a library"; these the loader
             * refuses as they are, or they are damaged. */
            if (n->corrupt != cases[i].corrupt)
                fail_msg("%s: corrupt is %d", cases[i].kind, n->corrupt);
            assert_true(n->refused || n->corrupt);
            assert_int_equal(n->not_library, AITK_DEP_OTHER_NONE);
        } else if (loads) {
            assert_int_equal(n->state, AITK_DEP_FOUND);
            assert_int_equal(n->skipped.count, 0);
        } else {
            assert_int_equal(n->state, AITK_DEP_NOT_FOUND);
            assert_int_equal(n->skipped.count, 1);
            assert_non_null(strstr(n->skipped.items[0], "a symbolic link loop: ld.so gives up "
                                                        "the rest of this folder list"));
        }
        aitk_dep_tree_free(&t);
#ifndef _WIN32
        if (strcmp(cases[i].kind, "fifo") == 0 || strcmp(cases[i].kind, "strtab") == 0)
            continue;
        const char *why = loader_says(root);
        if (loads ? *why != '\0' : !strstr(why, cases[i].loader))
            fail_msg("%s: the real loader says %s", cases[i].kind, why);
#endif
    }
}

static void test_cycle(void **state)
{
    (void)state;
    aitk_deps_opts o = {.ld_library_path = ""};
    aitk_dep_tree t = analyze(&o, FX "/elf/cycle/libcyca.so");
    /* liba -> libb -> liba: the second liba is the root, already loaded. */
    const aitk_dep_node *b = node(&t, "libcycb.so");
    assert_int_equal(b->state, AITK_DEP_FOUND);
    size_t back = b->first_child;
    while (back != AITK_DEP_NONE && strcmp(t.nodes[back].name, "libcyca.so") != 0)
        back = t.nodes[back].next_sibling;
    assert_int_not_equal(back, AITK_DEP_NONE);
    assert_true(t.nodes[back].repeat);
    assert_int_equal(t.nodes[back].first_child, AITK_DEP_NONE);
    assert_int_equal(aitk_dep_tree_problems(&t), 0);
    aitk_dep_tree_free(&t);
}

static void test_ld_library_path(void **state)
{
    (void)state;
    /* LD_LIBRARY_PATH comes before DT_RUNPATH: point it at d32 then d64 and
     * the rule changes, the 32-bit candidate is still skipped. */
    aitk_deps_opts o = {.ld_library_path = FX "/elf/wrongclass/d32:" FX "/elf/wrongclass/d64"};
    aitk_dep_tree t = analyze(&o, FX "/elf/wrongclass/libuser.so");
    const aitk_dep_node *dual = node(&t, "libdual.so");
    assert_string_equal(dual->how, "LD_LIBRARY_PATH");
    assert_string_equal(dual->path, FX "/elf/wrongclass/d64/libdual.so");
    aitk_dep_tree_free(&t);

    /* Another copy further down the order is a duplicate, not a problem. */
    aitk_deps_opts alt = {.ld_library_path = FX "/elf/wrongclass/alt"};
    t = analyze(&alt, FX "/elf/wrongclass/libuser.so");
    dual = node(&t, "libdual.so");
    assert_string_equal(dual->path, FX "/elf/wrongclass/alt/libdual.so");
    assert_int_equal(dual->duplicates.count, 1);
    assert_non_null(strstr(dual->duplicates.items[0],
                           FX "/elf/wrongclass/d64/libdual.so (DT_RUNPATH of libuser.so"));
    assert_int_equal(aitk_dep_tree_problems(&t), 0);
    assert_int_equal(aitk_dep_tree_warnings(&t), 1);
    aitk_dep_tree_free(&t);
}

/* cuDNN 9's sub-libraries, which libcudnn.so.9 and libcudnn_graph.so.9 open
 * with dlopen and name as no need (opened.yaml): followed as needs of their
 * opener, found by its RUNPATH, marked as opened at run time. Without an
 * ld.so.cache (this machine's holds the CUDA toolkit's cuDNN), the one
 * gone from the fixture is NOT FOUND, says what fails, and is a warning
 * (import works, the first convolution does not); under cuDNN's
 * GRAPH_JIT_ONLY configuration only the graph and JIT engine libraries are
 * needed. Before, none was in the tree. */
static void test_opened_at_run_time(void **state)
{
    (void)state;
    aitk_deps_opts o = {.ld_library_path = "", .ldcache_path = "/nonexistent/ld.so.cache"};
    unsetenv("CUDNN_LIB_CONFIG");
    aitk_dep_tree t = analyze(&o, FX "/elf/opened/full/libcudnn.so.9");
    static const char *const subs[] = {"graph", "ops", "cnn", "adv", "engines_precompiled",
                                       "engines_runtime_compiled", "heuristic"};
    for (size_t i = 0; i < sizeof subs / sizeof *subs; i++) {
        char name[64];
        snprintf(name, sizeof name, "libcudnn_%s.so.9", subs[i]);
        const aitk_dep_node *n = node(&t, name);
        assert_true(n->opened);
        assert_int_equal(n->state, AITK_DEP_FOUND);
        assert_string_equal(n->how, i < 4 ? "DT_RUNPATH of libcudnn.so.9"
                                          : "DT_RUNPATH of libcudnn_graph.so.9");
    }
    /* opened.yaml also lists the libraries of later releases
     * (libcudnn_ext, libcudnn_engines_tensor_ir): these openers do not
     * name them, so their absence is no finding. */
    assert_int_equal(aitk_dep_tree_problems(&t), 0);
    assert_int_equal(aitk_dep_tree_warnings(&t), 0);
    for (size_t i = 1; i < t.count; i++)
        if (strstr(t.nodes[i].name, "_ext") || strstr(t.nodes[i].name, "_tensor_ir"))
            fail_msg("%s followed, which its opener does not name", t.nodes[i].name);
    aitk_dep_tree_free(&t);

    /* A graph library that names libcudnn_engines_tensor_ir.so, as
     * 9.28.1.4's does, without it beside: a warning. */
    t = analyze(&o, FX "/elf/opened/newer/libcudnn_graph.so.9");
    const aitk_dep_node *ir = node(&t, "libcudnn_engines_tensor_ir.so.9");
    assert_true(ir->opened);
    assert_int_equal(ir->state, AITK_DEP_NOT_FOUND);
    assert_int_equal(aitk_dep_tree_warnings(&t), 1);
    aitk_dep_tree_free(&t);

    t = analyze(&o, FX "/elf/opened/gone/libcudnn.so.9");
    const aitk_dep_node *gone = node(&t, "libcudnn_engines_precompiled.so.9");
    assert_true(gone->opened);
    assert_int_equal(gone->state, AITK_DEP_NOT_FOUND);
    assert_non_null(strstr(gone->detail, "libcudnn_graph.so.9 opens it at run time, not as a "
                                         "link: torch imports, and its first convolution"));
    /* The load goes through; the first call needing it fails: a warning. */
    assert_int_equal(aitk_dep_tree_problems(&t), 0);
    assert_int_equal(aitk_dep_tree_warnings(&t), 1);
    aitk_dep_tree_free(&t);

    setenv("CUDNN_LIB_CONFIG", "GRAPH_JIT_ONLY", 1);
    t = analyze(&o, FX "/elf/opened/gone/libcudnn.so.9");
    unsetenv("CUDNN_LIB_CONFIG");
    assert_int_equal(aitk_dep_tree_problems(&t), 0);
    node(&t, "libcudnn_engines_runtime_compiled.so.9");
    for (size_t i = 1; i < t.count; i++)
        if (strstr(t.nodes[i].name, "_ops") || strstr(t.nodes[i].name, "_precompiled"))
            fail_msg("%s followed under GRAPH_JIT_ONLY", t.nodes[i].name);
    aitk_dep_tree_free(&t);
}

/* A long LD_LIBRARY_PATH of repeated and missing folders (review L7): each
 * folder is searched once, where it first comes (glibc keeps the first of
 * repeated entries), so the file found is the one the first occurrence
 * gives, and the searched list is the list without its repeats. The
 * witness is the real loader, given the same LD_LIBRARY_PATH in a child. */
static void test_ld_library_path_repeats(void **state)
{
    (void)state;
    aitk_str llp = AITK_STR_INIT;
    /* Under 128 KiB: the kernel's limit on one environment string (ldd). */
    for (int i = 0; i < 600; i++)
        aitk_str_appendf(&llp, "%s/nonexistent/d%d:", FX, i % 7);
    aitk_str_append(&llp, FX "/elf/wrongclass/d32:" FX "/elf/wrongclass/alt:");
    for (int i = 0; i < 200; i++)
        aitk_str_appendf(&llp, "%s:" FX "/nonexistent/d%d:", FX "/elf/wrongclass/d64", i % 7);
    aitk_str_append(&llp, FX "/elf/wrongclass/alt");
    assert_int_equal(aitk_str_status(&llp), AITK_OK);
    aitk_deps_opts o = {.ld_library_path = llp.ptr};
    aitk_dep_tree t = analyze(&o, FX "/elf/wrongclass/libuser.so");
    const aitk_dep_node *dual = node(&t, "libdual.so");
    assert_string_equal(dual->how, "LD_LIBRARY_PATH");
    assert_string_equal(dual->path, FX "/elf/wrongclass/alt/libdual.so");
    /* 7 missing folders, d32, alt: each once, in first-come order. */
    assert_int_equal(dual->searched.count, 9);
    assert_string_equal(dual->searched.items[7], FX "/elf/wrongclass/d32 (LD_LIBRARY_PATH)");
    assert_string_equal(dual->searched.items[8], FX "/elf/wrongclass/alt (LD_LIBRARY_PATH)");
    assert_int_equal(dual->skipped.count, 1); /* d32's 32-bit copy, once */
    /* d64's copy further down, once, for all its 200 mentions (and the
     * RUNPATH's). */
    assert_int_equal(dual->duplicates.count, 1);
    aitk_dep_tree_free(&t);
#ifndef _WIN32
    aitk_str shown = AITK_STR_INIT;
    const char *argv[] = {"/usr/bin/env", NULL, "ldd", FX "/elf/wrongclass/libuser.so", NULL};
    aitk_str env = AITK_STR_INIT;
    aitk_str_appendf(&env, "LD_LIBRARY_PATH=%s", llp.ptr);
    argv[1] = env.ptr;
    if (fx_exists("/usr/bin/ldd")) {
        assert_int_equal(fx_run(argv, &shown), 0);
        if (!strstr(aitk_str_cstr(&shown), "libdual.so => " FX "/elf/wrongclass/alt/libdual.so"))
            fail_msg("ldd found another copy:\n%s", aitk_str_cstr(&shown));
    }
    aitk_str_free(&shown);
    aitk_str_free(&env);
#endif
    aitk_str_free(&llp);
}

/* Every "name => path" line of ldd must be a node of our tree with the same
 * file (compared by identity, as ldd may print another spelling). */
static void compare_with_ldd(const char *lib)
{
    aitk_str out = AITK_STR_INIT;
    const char *argv[] = {"ldd", lib, NULL};
    if (fx_run(argv, &out) != 0)
        fail_msg("ldd %s failed", lib);
    aitk_deps_opts o = {0};
    aitk_dep_tree t = analyze(&o, lib);
    size_t compared = 0;
    for (const char *line = out.ptr; line && *line;) {
        size_t len = strcspn(line, "\n");
        const char *arrow = strstr(line, " => ");
        if (arrow && arrow < line + len) {
            const char *name = line + strspn(line, "\t ");
            char *n = aitk_strndup(name, (size_t)(arrow - name));
            const char *p = arrow + 4;
            char *path = aitk_strndup(p, strcspn(p, " \n"));
            bool match = false;
            for (size_t i = 1; i < t.count && !match; i++) {
                struct stat a, b;
                match = strcmp(t.nodes[i].name, n) == 0 && t.nodes[i].path &&
                        stat(t.nodes[i].path, &a) == 0 && stat(path, &b) == 0 &&
                        a.st_dev == b.st_dev && a.st_ino == b.st_ino;
            }
            if (strcmp(path, "not") != 0 && !match)
                fail_msg("%s: ldd resolves %s => %s, the tree does not", lib, n, path);
            compared++;
            aitk_free(n);
            aitk_free(path);
        }
        line += len + (line[len] != '\0');
    }
    assert_true(compared > 0);
    aitk_dep_tree_free(&t);
    aitk_str_free(&out);
}

static void test_agrees_with_ldd(void **state)
{
    (void)state;
    const char *libs[] = {
        "/usr/local/cuda/lib64/libcudnn.so.9", "/usr/local/cuda/lib64/libcublas.so.13",
        "/usr/local/cuda/lib64/libcusolver.so.12", "/usr/local/cuda/lib64/libnvblas.so.13",
        "/lib/x86_64-linux-gnu/libstdc++.so.6", "/lib/x86_64-linux-gnu/libelf.so.1",
        "/lib/x86_64-linux-gnu/libyaml-0.so.2", "/usr/bin/cmake",
        FX "/elf/chain/libtop.so", FX "/elf/rpath/libold.so", FX "/elf/wrongclass/libuser.so",
        FX "/elf/cycle/libcyca.so",
        FX "/elf/venv/lib/python3.11/site-packages/torch/lib/libtorch_cpu.so"};
    size_t done = 0;
    for (size_t i = 0; i < sizeof libs / sizeof *libs; i++) {
        if (!fx_exists(libs[i]))
            continue;
        compare_with_ldd(libs[i]);
        done++;
    }
    assert_true(done >= 5);
}

/* python.exe's folder, read from where torch is installed (no --app-dir). */
#define ENV_APP_RULE "application folder (the environment's own, no pyvenv.cfg)"

static aitk_dep_tree analyze_pe(const char *dll, aitk_win_mode mode)
{
    aitk_deps_opts o = {.windows_root = FX_WINROOT, .win_mode = mode};
    return analyze(&o, dll);
}

/* The same on Windows (opened.yaml's DLL names): cudnn64_9.dll imports no
 * sub-DLL and opens them by name; the walk follows them as the opener's
 * imports, matching the opener's name ignoring case as Windows does, and a
 * missing one is a warning that says what fails. Before, none was in the
 * tree. */
static void test_opened_at_run_time_windows(void **state)
{
    (void)state;
    if (!fx_exists(FX "/pe/opened/full/cuDNN64_9.DLL"))
        skip();
    unsetenv("CUDNN_LIB_CONFIG");
    aitk_dep_tree t = analyze_pe(FX "/pe/opened/full/cuDNN64_9.DLL", AITK_WIN_SAFE);
    static const char *const subs[] = {"graph", "ops", "cnn", "adv", "engines_precompiled",
                                       "engines_runtime_compiled", "heuristic"};
    for (size_t i = 0; i < sizeof subs / sizeof *subs; i++) {
        char name[64];
        snprintf(name, sizeof name, "cudnn_%s64_9.dll", subs[i]);
        const aitk_dep_node *n = node(&t, name);
        assert_true(n->opened);
        assert_int_equal(n->state, AITK_DEP_FOUND);
        assert_int_equal(t.nodes[n->parent].depth, i < 4 ? 0 : 1);
    }
    assert_int_equal(aitk_dep_tree_problems(&t), 0);
    assert_int_equal(aitk_dep_tree_warnings(&t), 0);
    aitk_dep_tree_free(&t);

    t = analyze_pe(FX "/pe/opened/gone/cudnn64_9.dll", AITK_WIN_SAFE);
    const aitk_dep_node *gone = node(&t, "cudnn_ops64_9.dll");
    assert_true(gone->opened);
    assert_int_equal(gone->state, AITK_DEP_NOT_FOUND);
    assert_non_null(strstr(gone->detail, "cudnn64_9.dll opens it at run time, not as a link: "
                                         "torch imports, and the first call into cuDNN"));
    assert_int_equal(aitk_dep_tree_problems(&t), 0);
    assert_int_equal(aitk_dep_tree_warnings(&t), 1);
    aitk_dep_tree_free(&t);

    /* GRAPH_JIT_ONLY needs no ops DLL: nothing is missing then. */
    setenv("CUDNN_LIB_CONFIG", "GRAPH_JIT_ONLY", 1);
    t = analyze_pe(FX "/pe/opened/gone/cudnn64_9.dll", AITK_WIN_SAFE);
    unsetenv("CUDNN_LIB_CONFIG");
    assert_int_equal(aitk_dep_tree_warnings(&t), 0);
    node(&t, "cudnn_engines_runtime_compiled64_9.dll");
    aitk_dep_tree_free(&t);
}

static void test_windows_torch_240(void **state)
{
    (void)state;
    if (!fx_exists(FX_TORCH "/fbgemm.dll"))
        skip();
    aitk_dep_tree t = analyze_pe(FX_TORCH "/fbgemm.dll", AITK_WIN_SAFE);
    assert_int_equal(t.format, AITK_DEP_PE);
    const aitk_dep_node *omp = node(&t, "libomp140.x86_64.dll");
    assert_int_equal(omp->state, AITK_DEP_NOT_FOUND);
    /* torch's order: the DLL's folder, the application folder (python.exe's:
     * the environment itself, as in a conda environment), add_dll_directory
     * folders, System32. */
    assert_int_equal(omp->searched.count, 4);
    assert_string_equal(omp->searched.items[0], FX_TORCH " (the DLL's folder)");
    assert_string_equal(omp->searched.items[1], FX "/pe/env (" ENV_APP_RULE ")");
    assert_string_equal(omp->searched.items[2],
                        FX "/pe/env/Library/bin (add_dll_directory (Library\\bin))");
    assert_string_equal(omp->searched.items[3], FX_WINROOT "/Windows/System32 (System32)");
    const aitk_dep_node *vc = node(&t, "vcruntime140.dll");
    assert_int_equal(vc->state, AITK_DEP_FOUND);
    assert_string_equal(vc->how, "System32");
    /* The one problem is libomp140; kernel32, msvcrt, the API set are Windows'. */
    assert_int_equal(aitk_dep_tree_problems(&t), 1);
    for (size_t i = 1; i < t.count; i++) {
        const char *n = t.nodes[i].name;
        if (strcasecmp(n, "KERNEL32.dll") == 0 || strcasecmp(n, "msvcrt.dll") == 0 ||
            strncmp(n, "api-ms-win-", 11) == 0)
            assert_int_equal(t.nodes[i].state, AITK_DEP_SYSTEM);
    }
    aitk_str chain = AITK_STR_INIT;
    for (size_t i = 0; i < t.count; i++)
        if (t.nodes[i].state == AITK_DEP_NOT_FOUND)
            aitk_dep_tree_chain(&t, i, &chain);
    assert_string_equal(aitk_str_cstr(&chain), "fbgemm.dll -> libomp140.x86_64.dll");
    aitk_str_free(&chain);
    aitk_dep_tree_free(&t);

    /* Without --windows-root nothing of Windows' own is missing either. */
    aitk_deps_opts bare = {0};
    t = analyze(&bare, FX_TORCH "/c10.dll");
    for (size_t i = 1; i < t.count; i++)
        if (strcasecmp(t.nodes[i].name, "KERNEL32.dll") == 0)
            assert_int_equal(t.nodes[i].state, AITK_DEP_SYSTEM);
    /* ...and what System32 may hold is unknown, not missing: the VC++
     * runtime is there on a machine with the redistributable installed. */
    const aitk_dep_node *vcrt = node(&t, "vcruntime140.dll");
    assert_int_equal(vcrt->state, AITK_DEP_UNKNOWN);
    assert_non_null(strstr(vcrt->detail, "give --windows-root"));
    assert_int_equal(aitk_dep_tree_problems(&t), 0);
    aitk_dep_tree_free(&t);
}

/* python311.dll is found where python.exe is (pyvenv.cfg home), is NOT
 * FOUND when that folder holds another Python's DLL, and is unknown, not
 * missing, where no folder says where the interpreter is. */
static void test_windows_python_dll(void **state)
{
    (void)state;
    if (!fx_exists(FX "/pe/venv/pyvenv.cfg"))
        skip();
    aitk_dep_tree t = analyze_pe(FX "/pe/venv/Lib/site-packages/torch/lib/torch_python.dll",
                                 AITK_WIN_SAFE);
    const aitk_dep_node *py = node(&t, "python311.dll");
    assert_int_equal(py->state, AITK_DEP_FOUND);
    assert_string_equal(py->path, FX "/pe/base311/python311.dll");
    assert_non_null(strstr(py->how, "pyvenv.cfg home"));
    assert_int_equal(aitk_dep_tree_problems(&t), 0);
    aitk_dep_tree_free(&t);

    t = analyze_pe(FX "/pe/venv312/Lib/site-packages/torch/lib/torch_python.dll", AITK_WIN_SAFE);
    py = node(&t, "python311.dll");
    assert_int_equal(py->state, AITK_DEP_NOT_FOUND);
    assert_non_null(strstr(py->detail, "another Python version"));
    assert_int_equal(aitk_dep_tree_problems(&t), 1);
    aitk_dep_tree_free(&t);

    t = analyze_pe(FX "/pe/loose/torch_python.dll", AITK_WIN_SAFE);
    py = node(&t, "python311.dll");
    assert_int_equal(py->state, AITK_DEP_UNKNOWN);
    assert_non_null(strstr(py->detail, "give --app-dir"));
    assert_int_equal(aitk_dep_tree_problems(&t), 0);
    aitk_dep_tree_free(&t);

    /* --app-dir says where python.exe is. */
    aitk_deps_opts o = {.windows_root = FX_WINROOT, .app_dir = FX "/pe/base311"};
    t = analyze(&o, FX "/pe/loose/torch_python.dll");
    assert_int_equal(node(&t, "python311.dll")->state, AITK_DEP_FOUND);
    aitk_dep_tree_free(&t);
}

/* A report check joins the problems of many trees (deps.torch, one per
 * DLL): each search list is said once, and two fixes never run together
 * ("...ship libomp140.x86_64.dll torch_cpu.dll: Reinstall..." was seen). */
static void test_describe_joins(void **state)
{
    (void)state;
    if (!fx_exists(FX_TORCH "/fbgemm.dll"))
        skip();
    aitk_remedies *rem = NULL;
    aitk_str err = AITK_STR_INIT, observed = AITK_STR_INIT, remedy = AITK_STR_INIT,
             sources = AITK_STR_INIT;
    assert_int_equal(aitk_remedies_load(&rem, &err), AITK_OK);
    const char *roots[] = {FX_TORCH "/fbgemm.dll", FX_TORCH "/torch_cpu.dll",
                           FX_TORCH "/caffe2_nvrtc.dll"};
    for (size_t i = 0; i < 3; i++) {
        aitk_dep_tree t = analyze_pe(roots[i], AITK_WIN_SAFE);
        assert_int_equal(aitk_deps_describe_problems(&t, rem, &observed, &remedy, &sources),
                         AITK_OK);
        aitk_dep_tree_free(&t);
    }
    const char *o = aitk_str_cstr(&observed), *first = strstr(o, "; searched: 1. ");
    assert_non_null(first);
    if (strstr(first + 1, "; searched: 1. " FX_TORCH " (the DLL's folder)"))
        fail_msg("one search list said twice:\n%s", o);
    assert_non_null(strstr(o, "searched: the same folders as above"));
    const char *r = aitk_str_cstr(&remedy);
    assert_non_null(strstr(r, "libomp140.x86_64.dll; also, for nvrtc64_120_0.dll: "));
    aitk_remedies_free(rem);
    aitk_str_free(&err);
    aitk_str_free(&observed);
    aitk_str_free(&remedy);
    aitk_str_free(&sources);
}

static void test_windows_other_cases(void **state)
{
    (void)state;
    if (!fx_exists(FX_TORCH "/torch_cpu.dll"))
        skip();
    aitk_dep_tree t = analyze_pe(FX_TORCH "/torch_cpu.dll", AITK_WIN_SAFE);
    /* The delay-load import is missing but not counted as a load failure. */
    const aitk_dep_node *cudnn = node(&t, "cudnn64_9.dll");
    assert_true(cudnn->delay);
    assert_int_equal(cudnn->state, AITK_DEP_NOT_FOUND);
    assert_int_equal(aitk_dep_tree_problems(&t), 1); /* libomp140 through fbgemm */
    /* libiomp5md.dll: loaded from torch\lib, a second copy in Library\bin. */
    const aitk_dep_node *iomp = node(&t, "libiomp5md.dll");
    assert_string_equal(iomp->path, FX_TORCH "/libiomp5md.dll");
    assert_int_equal(iomp->duplicates.count, 1);
    assert_non_null(
        strstr(iomp->duplicates.items[0], "Library/bin/libiomp5md.dll (version 5.0.2019.1)"));
    assert_int_equal(aitk_dep_tree_warnings(&t), 2);
    aitk_dep_tree_free(&t);

    if (!fx_exists(FX "/pe/no-i686")) {
        t = analyze_pe(FX_TORCH "/torch_cuda.dll", AITK_WIN_SAFE);
        const aitk_dep_node *z = node(&t, "zlibwapi.dll");
        assert_int_equal(z->state, AITK_DEP_WRONG_ARCH);
        assert_string_equal(z->arch, "i386");
        assert_int_equal(aitk_dep_tree_problems(&t), 1);
        aitk_dep_tree_free(&t);
    }

    /* An import the installed DLL does not export: error 127. */
    t = analyze_pe(FX_TORCH "/caffe2_nvrtc.dll", AITK_WIN_SAFE);
    const aitk_dep_node *nvrtc = node(&t, "nvrtc64_120_0.dll");
    assert_int_equal(nvrtc->state, AITK_DEP_MISSING_SYMBOL);
    assert_non_null(strstr(nvrtc->detail, "does not export nvrtc_new (1 missing)"));
    assert_null(strstr(nvrtc->detail, "nvrtc_old"));
    assert_int_equal(aitk_dep_tree_problems(&t), 1);
    aitk_dep_tree_free(&t);

    /* Legacy mode: no DLL-folder rule; torch's folders arrive through PATH. */
    t = analyze_pe(FX_TORCH "/fbgemm.dll", AITK_WIN_LEGACY);
    const aitk_dep_node *omp = node(&t, "libomp140.x86_64.dll");
    assert_string_equal(omp->searched.items[0], FX "/pe/env (" ENV_APP_RULE ")");
    assert_string_equal(omp->searched.items[1], FX_WINROOT "/Windows/System32 (System32)");
    assert_string_equal(omp->searched.items[2], FX_WINROOT "/Windows (Windows folder)");
    assert_string_equal(omp->searched.items[3], FX_TORCH " (PATH (torch's dll_paths))");
    aitk_dep_tree_free(&t);
}

/* An import by ordinal past the provider's export table fails to bind
 * (it used to be skipped), and a forwarded export whose target DLL is
 * absent, or lacks the function, is a broken link below the forwarding DLL. */
static void test_windows_ordinals_and_forwarders(void **state)
{
    (void)state;
    if (!fx_exists(FX "/pe/ord/ordimp.dll"))
        skip();
    aitk_dep_tree t = analyze_pe(FX "/pe/ord/ordimp.dll", AITK_WIN_SAFE);
    const aitk_dep_node *b = node(&t, "ordb.dll");
    assert_int_equal(b->state, AITK_DEP_MISSING_SYMBOL);
    assert_non_null(strstr(b->detail, "does not export ordinal 5 (1 missing)"));
    assert_non_null(strstr(b->detail, "The ordinal 5 could not be located"));
    assert_int_equal(aitk_dep_tree_problems(&t), 1);
    aitk_dep_tree_free(&t);

    t = analyze_pe(FX "/pe/fwd/fwda.dll", AITK_WIN_SAFE);
    const aitk_dep_node *c = node(&t, "cmiss.dll");
    assert_true(c->forwarder);
    assert_int_equal(c->state, AITK_DEP_NOT_FOUND);
    assert_string_equal(t.nodes[c->parent].name, "fwdb.dll");
    assert_non_null(strstr(c->detail, "fwdb.dll forwards fwdfn to cmiss.realfn"));
    aitk_str chain = AITK_STR_INIT;
    assert_int_equal(aitk_dep_tree_chain(&t, (size_t)(c - t.nodes), &chain), AITK_OK);
    assert_string_equal(aitk_str_cstr(&chain), "fwda.dll -> fwdb.dll -> cmiss.dll");
    aitk_str_free(&chain);
    assert_int_equal(aitk_dep_tree_problems(&t), 1);
    aitk_dep_tree_free(&t);

    /* The target DLL is there but lacks one of the two forwarded functions
     * the requester imports: that one, and only it, is missing. */
    t = analyze_pe(FX "/pe/fwd2/fwdd.dll", AITK_WIN_SAFE);
    c = node(&t, "cmold.dll");
    assert_true(c->forwarder);
    assert_int_equal(c->state, AITK_DEP_MISSING_SYMBOL);
    assert_string_equal(t.nodes[c->parent].name, "fwdc.dll");
    assert_non_null(strstr(c->detail, "does not export realgone (forwarded from fwdgone) "
                                      "(1 missing), which fwdc.dll forwards to it"));
    assert_null(strstr(c->detail, "realok"));
    assert_non_null(strstr(c->detail, "(error 127)"));
    assert_int_equal(aitk_dep_tree_problems(&t), 1);
    aitk_dep_tree_free(&t);

    /* fwdc.dll met first by a requester whose forwarded import is there,
     * then again (a repeat, not expanded) by fwdd.dll: the second
     * requester's forwards are bound and checked all the same. */
    t = analyze_pe(FX "/pe/fwd2/fwdtop.dll", AITK_WIN_SAFE);
    size_t missing = 0;
    for (size_t i = 0; i < t.count; i++)
        if (strcmp(t.nodes[i].name, "cmold.dll") == 0 &&
            t.nodes[i].state == AITK_DEP_MISSING_SYMBOL) {
            missing++;
            assert_string_equal(t.nodes[t.nodes[t.nodes[i].parent].parent].name, "fwdd.dll");
            assert_non_null(strstr(t.nodes[i].detail, "realgone"));
        }
    assert_int_equal(missing, 1);
    assert_int_equal(aitk_dep_tree_problems(&t), 1);
    aitk_dep_tree_free(&t);

    /* Two DLLs forwarding to each other: each forward is bound once, and
     * the walk ends. fwdr -> fwdx (its import), fwdx -> fwdy (its import
     * and the target of xf), fwdy -> fwdx (its import, the target of yh):
     * a handful of links, not an endless chain of repeats. */
    t = analyze_pe(FX "/pe/fwdcycle/fwdr.dll", AITK_WIN_SAFE);
    if (t.count > 16) /* 13 with the system DLLs */
        fail_msg("%zu nodes for three DLLs", t.count);
    assert_int_equal(aitk_dep_tree_problems(&t), 0);
    aitk_dep_tree_free(&t);

    /* A Git LFS pointer as a dependency DLL: named for what it is (the
     * not-a-library remedy), as when it is given as the root. */
    t = analyze_pe(FX "/pe/lfsdep/lfsuse.dll", AITK_WIN_SAFE);
    const aitk_dep_node *lfs = node(&t, "lfsdll.dll");
    assert_int_equal(lfs->state, AITK_DEP_BAD_FILE);
    assert_int_equal(lfs->not_library, AITK_DEP_OTHER_LFS_POINTER);
    assert_non_null(strstr(lfs->detail, "Git LFS pointer"));
    assert_non_null(strstr(lfs->detail, "error 193"));
    assert_int_equal(aitk_dep_tree_problems(&t), 1);
    aitk_dep_tree_free(&t);

    /* A chain: fwdhead forwards to fwdmid, which forwards on. The loader
     * follows each link, so the ends are checked: cmiss2.dll is absent
     * (126) and fwdend.dll lacks realgone (127); fwdmid itself exports all
     * three names (as forwards), so it is no problem. */
    t = analyze_pe(FX "/pe/fwdchain/fwduse.dll", AITK_WIN_SAFE);
    const aitk_dep_node *mid = node(&t, "fwdmid.dll");
    assert_true(mid->forwarder);
    assert_int_equal(mid->state, AITK_DEP_FOUND);
    c = node(&t, "cmiss2.dll");
    assert_true(c->forwarder);
    assert_int_equal(c->state, AITK_DEP_NOT_FOUND);
    assert_non_null(strstr(c->detail, "fwdmid.dll forwards cf to cmiss2.realcf"));
    aitk_str_clear(&chain);
    assert_int_equal(aitk_dep_tree_chain(&t, (size_t)(c - t.nodes), &chain), AITK_OK);
    assert_string_equal(aitk_str_cstr(&chain),
                        "fwduse.dll -> fwdhead.dll -> fwdmid.dll -> cmiss2.dll");
    const aitk_dep_node *end = node(&t, "fwdend.dll");
    assert_int_equal(end->state, AITK_DEP_MISSING_SYMBOL);
    assert_non_null(strstr(end->detail, "does not export realgone (forwarded from gone2)"));
    assert_null(strstr(end->detail, "realok"));
    assert_int_equal(aitk_dep_tree_problems(&t), 2);
    aitk_dep_tree_free(&t);
    aitk_str_free(&chain);

    /* The middle of the chain met first as a plain import (fwda2 imports bx
     * from fwdb2): the forward still reaches fwdc2, which lacks f. */
    t = analyze_pe(FX "/pe/fwdchain/fwdr2.dll", AITK_WIN_SAFE);
    const aitk_dep_node *c2 = node(&t, "fwdc2.dll");
    assert_true(c2->forwarder);
    assert_int_equal(c2->state, AITK_DEP_MISSING_SYMBOL);
    assert_non_null(strstr(c2->detail, "does not export f (forwarded from f)"));
    assert_int_equal(aitk_dep_tree_problems(&t), 1);
    aitk_dep_tree_free(&t);
}

static void test_bad_roots(void **state)
{
    (void)state;
    aitk_deps_opts o = {0};
    aitk_deps *d = NULL;
    aitk_str err = AITK_STR_INIT;
    aitk_dep_tree t;
    assert_int_equal(aitk_deps_new(&o, &d, &err), AITK_OK);
    assert_int_equal(aitk_deps_analyze(d, FX "/does-not-exist.so", &t, &err), AITK_E_IO);
    assert_non_null(strstr(aitk_str_cstr(&err), "does-not-exist.so"));
    aitk_str_clear(&err);
    /* No library, nor named like one: to be skipped (test_root.c has the rule). */
    assert_int_equal(aitk_deps_analyze(d, FX "/src/leaf.c", &t, &err), AITK_E_UNSUPPORTED);
    assert_int_equal(t.not_library, AITK_DEP_OTHER_UNKNOWN);
    assert_non_null(strstr(aitk_str_cstr(&err), "leaf.c: neither an ELF nor a PE (Windows) file, "
                                                "not a shared library"));

    aitk_str_clear(&err);
    assert_int_equal(aitk_deps_analyze(d, FX "/elf", &t, &err), AITK_E_INVAL);
    assert_non_null(strstr(aitk_str_cstr(&err), "/elf: is a folder"));
    aitk_deps_free(d);
    aitk_str_free(&err);
}

static void test_out_of_memory(void **state)
{
    (void)state;
    /* Each allocation in turn fails: the analysis reports NOMEM (or finishes
     * when the failure hits nothing essential), never crashes or leaks. */
    const char *roots[] = {FX_TORCH "/torch_cpu.dll", FX "/elf/wrongclass/libuser.so",
                           FX "/elf/glibc/libtoonew.so", FX "/pe/ord/ordimp.dll",
                           FX "/pe/fwd/fwda.dll", FX "/pe/fwdchain/fwduse.dll",
                           FX "/elf/lfsdep/libuser.so", FX "/elf/refused/pie/libuser.so",
                           FX "/elf/refused/loop/libuser.so", FX "/elf/symver/libsvuse.so"};
    for (size_t r = 0; r < sizeof roots / sizeof *roots; r++) {
        if (!fx_exists(roots[r]))
            continue;
        /* Until the injected failure falls past the last allocation: then
         * every run succeeds (20 in a row ends the loop). */
        long n = 0;
        for (long ok_in_row = 0; ok_in_row < 20 && n < 50000; n++) {
            aitk_deps_opts o = {.windows_root = FX_WINROOT, .ld_library_path = ""};
            aitk_status st = fx_analyze_failing_at(&o, roots[r], n);
            assert_true(st == AITK_OK || st == AITK_E_NOMEM);
            ok_in_row = st == AITK_OK ? ok_in_row + 1 : 0;
        }
        print_message("%s: allocation failures injected at 0..%ld\n", roots[r], n - 1);
        assert_true(n > 40); /* the walk does allocate: the loop must have run */
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_linux_fixture_rules),
        cmocka_unit_test(test_ld_library_path),
        cmocka_unit_test(test_ld_library_path_repeats),
        cmocka_unit_test(test_opened_at_run_time),
        cmocka_unit_test(test_opened_at_run_time_windows),
        cmocka_unit_test(test_cycle),
        cmocka_unit_test(test_versioned_symbol_of_another_release),
        cmocka_unit_test(test_root_without_soname_needed_by_name),
        cmocka_unit_test(test_non_elf_candidate_ends_the_search),
        cmocka_unit_test(test_refused_candidates),
        cmocka_unit_test(test_agrees_with_ldd),
        cmocka_unit_test(test_windows_torch_240),
        cmocka_unit_test(test_windows_other_cases),
        cmocka_unit_test(test_windows_python_dll),
        cmocka_unit_test(test_describe_joins),
        cmocka_unit_test(test_windows_ordinals_and_forwarders),
        cmocka_unit_test(test_bad_roots),
        cmocka_unit_test(test_out_of_memory),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
