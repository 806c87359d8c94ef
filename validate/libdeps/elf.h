/* ELF reader for the dependency doctor, through libelf.
 *
 * Reads only what the loader's search needs: class, machine, OS ABI,
 * DT_NEEDED, DT_RPATH, DT_RUNPATH, DT_SONAME, DF_1_NODEFLIB, the interpreter,
 * symbol-version needs (GLIBC_2.x wanted from libc.so.6) and definitions
 * (what a library provides), and the symbols bound to a needed version
 * (sym@VER: the loader wants that symbol at that version, in that library).
 * What a library defines, symbol by symbol, is read only when asked
 * (aitk_elf_read_defs). Files are mapped, not read, because CUDA
 * libraries run to hundreds of MiB and we touch a few pages of each. Every
 * failure names the file; no input, however broken, may crash the reader. */
#ifndef AITK_LIBDEPS_ELF_H
#define AITK_LIBDEPS_ELF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "common/status.h"
#include "common/str.h"

typedef struct aitk_elf_verneed {
    char *file;     /* the DT_NEEDED name the versions are wanted from */
    char *version;  /* "GLIBC_2.34" */
    unsigned index; /* the version index (vna_other) the symbols bound to it carry */
} aitk_elf_verneed;

/* An undefined dynamic symbol bound to a needed version (the versym index
 * of a verneed entry): ld.so looks it up with that version, and the load
 * fails ("undefined symbol: NAME, version VER") when no loaded object
 * defines it so. Weak ones are not read (their absence is no error), nor
 * unversioned ones (the program or an RTLD_GLOBAL library may supply
 * them, which no file here tells), nor those bound to glibc's own
 * versions (GLIBC_*: the version check covers them whole; elf_syms.c). */
typedef struct aitk_elf_symref {
    char *name;
    size_t need;    /* its verneed entry (index into aitk_elf_info.verneed) */
} aitk_elf_symref;

typedef struct aitk_elf_info {
    int elf_class;      /* ELFCLASS32 or ELFCLASS64 */
    unsigned machine;   /* EM_* */
    unsigned osabi;
    unsigned type;      /* ET_DYN, ET_EXEC, ... */
    char *soname, *rpath, *runpath, *interp; /* NULL when absent */
    bool nodeflib;      /* DF_1_NODEFLIB: skip ld.so.cache and default folders */
    bool pie;           /* DF_1_PIE: a program, which ld.so will not load as a dependency */
    char **needed;
    size_t needed_count;
    aitk_elf_verneed *verneed;
    size_t verneed_count;
    char **verdef;      /* version names defined (provided), base entry excluded */
    size_t verdef_count;
    aitk_elf_symref *refs; /* versioned undefined symbols, none without section headers */
    size_t ref_count;
    /* A cut-off copy (an interrupted download or copy): its headers describe
     * `described_size` bytes, the file holds `file_size`. ld.so maps the
     * missing part and faults on it (SIGBUS), so this is a finding, and only
     * the identity above is read. */
    bool truncated;
    uint64_t file_size, described_size;
    /* A whole, well-formed file that ld.so still will not load as it stands
     * (no loadable segment, a load segment it will not map, no dynamic
     * section): ld.so's words, or NULL. Only the identity above is read then. */
    char *unloadable;
} aitk_elf_info;

/* The ELF identity values the resolver compares (System V ABI numbers; spelled
 * out because mingw-w64 has no <elf.h>). */
enum {
    AITK_ELFCLASS32 = 1,
    AITK_ELFCLASS64 = 2,
};
enum {
    AITK_EM_386 = 3,
    AITK_EM_PPC64 = 21,
    AITK_EM_ARM = 40,
    AITK_EM_X86_64 = 62,
    AITK_EM_AARCH64 = 183,
    AITK_EM_RISCV = 243,
};

/* Whole-file analysis. AITK_E_IO when it cannot be opened, AITK_E_PARSE when
 * it is not a well-formed ELF object (a damaged header or dynamic section: no
 * tool writes it); err gets "path: reason". A file cut short, even inside its
 * ELF header, is AITK_OK with `truncated` set; one ld.so refuses as it is,
 * AITK_OK with `unloadable` set. Cut short and damaged are told apart by
 * where the file ends (aitk_elf_judge_layout): a cut copy is shorter than
 * what plausible headers describe; a damaged header points past the end of a
 * file that is otherwise whole, or beyond any library's size. Without
 * section headers (stripped by sstrip and the like) the dynamic section is
 * found through the PT_DYNAMIC program header, as ld.so finds it. */
aitk_status aitk_elf_read_file(const char *path, aitk_elf_info *out, aitk_str *err);
/* The same over a file already open for reading (the root the tree walk
 * sniffed: one open per root); `name` is used in messages; fd stays open. */
aitk_status aitk_elf_read_fd(int fd, const char *name, aitk_elf_info *out, aitk_str *err);
/* The same over bytes in memory (tests, fuzzing); `name` is used in messages. */
aitk_status aitk_elf_read_mem(const char *name, const void *data, size_t len, aitk_elf_info *out,
                              aitk_str *err);
void aitk_elf_info_free(aitk_elf_info *info);

/* What a library defines, symbol by symbol, with the version each is
 * defined at: read from its .dynsym when a requester binds symbols to one
 * of its versions, not with the rest (a CUDA library defines thousands). */
typedef struct aitk_elf_defs aitk_elf_defs;
/* Reads the defined dynamic symbols of a file aitk_elf_read_file read
 * whole; AITK_E_PARSE ("path: reason") when its symbol tables are
 * unreadable, AITK_E_UNSUPPORTED in a build without libelf. An object with
 * no .dynsym section (section headers stripped) defines nothing here:
 * *out is NULL, and the caller cannot judge its symbols. */
aitk_status aitk_elf_read_defs(const char *path, aitk_elf_defs **out, aitk_str *err);
/* Whether a reference to `name` at `version` binds to a definition here,
 * by glibc's rule (elf/dl-lookup.c, check_match): a definition at that
 * version, default or not (a library keeps old ones as name@VER for the
 * programs built against them), or one that carries no version of its
 * own and is not hidden. */
bool aitk_elf_defs_binds(const aitk_elf_defs *defs, const char *name, const char *version);
void aitk_elf_defs_free(aitk_elf_defs *defs);

/* Cheap identity check of a search candidate: reads the first 20 bytes only.
 * AITK_E_PARSE when the file is not ELF. */
aitk_status aitk_elf_peek(const char *path, int *elf_class, unsigned *machine, aitk_str *err);

/* What ld.so's open_verify makes of a file's first bytes (glibc
 * elf/dl-load.c, in its order), and of what kind the fault is. */
typedef enum aitk_elf_head {
    AITK_ELF_HEAD_OK,      /* loadable, as far as the ELF header says */
    AITK_ELF_HEAD_OTHER,   /* another class or machine: passed over in a search */
    AITK_ELF_HEAD_NOT_ELF, /* no ELF magic ("invalid ELF header") */
    AITK_ELF_HEAD_CUT,     /* ELF magic, and the file ends inside the ELF header */
    AITK_ELF_HEAD_CORRUPT, /* a header no tool writes: a damaged copy */
    AITK_ELF_HEAD_REFUSED, /* well-formed, of a kind ld.so does not load */
} aitk_elf_head;
/* Judges the ELF header in h (n bytes read from the file's start; 64 are
 * enough). For a search candidate, want_class and want_machine are the
 * tree's; a root (want_class 0) is judged on its own class, machine and byte
 * order (a tree of another machine is examined as it is) and may be a
 * program (ET_EXEC: execve loads it, not dlopen). Whatever is not OK gets
 * its reason in `why`: ours, then ld.so's words in brackets where it has
 * them ("corrupt header: ... (ld.so: ELF file's phentsize not the expected
 * size)"). A byte-order flag that contradicts the header it heads (EI_DATA
 * says big-endian, e_version reads 1 only as little-endian) is a damaged
 * header, not a big-endian build. */
aitk_elf_head aitk_elf_judge_header(const unsigned char *h, size_t n, int want_class,
                                    unsigned want_machine, aitk_str *why);

/* For a whole file (raw, size bytes) whose ELF header passed
 * aitk_elf_judge_header (elf_layout.c, Linux build): OK; CORRUPT when a
 * header places something past the end of a file that is otherwise whole
 * (its section header table, which tools write last, ends where the file
 * does) or beyond any size a library has (64 GiB), or holds a section
 * count or entry size no tool writes; else, when the file is shorter than
 * its headers describe, CUT, *described being where they end. `why` says
 * which field. */
aitk_elf_head aitk_elf_judge_layout(const unsigned char *raw, size_t size, uint64_t *described,
                                    aitk_str *why);
/* ld.so's checks of the program headers before it maps a file
 * (_dl_map_object_from_fd): a load segment alignment that is no multiple of
 * the page or does not match its offset, no load segment, a library with no
 * dynamic segment. REFUSED with ld.so's words, or OK. The layout must have
 * been judged OK. */
aitk_elf_head aitk_elf_judge_segments(const unsigned char *raw, size_t size, aitk_str *why);

/* What ld.so makes of one file met in a search (glibc elf/dl-load.c,
 * open_verify, in its order): */
typedef enum aitk_elf_candidate {
    AITK_ELF_CANDIDATE_USE,       /* a loadable object of the tree's class and machine */
    AITK_ELF_CANDIDATE_SKIP,      /* another class or machine: ld.so tries the next folder */
    AITK_ELF_CANDIDATE_STOP,      /* ld.so fails the load here: `why` has its reason */
    AITK_ELF_CANDIDATE_NOT_OPENED /* open failed: *open_errno says why */
} aitk_elf_candidate;
/* Checks one candidate against the tree's class and machine, reading its
 * first 64 bytes: too short for an ELF header, no ELF magic, a byte order,
 * version, OS ABI, ABI version or padding ld.so refuses, a type other than
 * ET_DYN (an executable cannot be a dependency), a program header entry of
 * the wrong size, or a FIFO stop the load, in
 * glibc's own words ("invalid ELF header", "file too short", ...); another
 * class or machine is passed over. *cls is the ELF class byte of a file
 * with the ELF magic (0 for any other file, so a STOP verdict says whether
 * the file was ELF at all); *machine is set when read; *kind says of what
 * kind a STOP is (aitk_elf_judge_header; REFUSED for a folder or FIFO). */
aitk_elf_candidate aitk_elf_check_candidate(const char *path, int want_class, unsigned want_machine,
                                            int *cls, unsigned *machine, int *open_errno,
                                            aitk_elf_head *kind, aitk_str *why);

/* "x86-64", "i386", "AArch64", or "machine 0x.." into `out`. */
void aitk_elf_machine_name(unsigned machine, aitk_str *out);

#endif
