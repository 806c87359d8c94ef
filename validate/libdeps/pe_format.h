/* Offsets, sizes and magic values of the PE/COFF structures the reader
 * walks, named as Microsoft's "PE Format" document names the fields
 * (learn.microsoft.com/en-us/windows/win32/debug/pe-format: "MS-DOS Stub",
 * "Signature", "COFF File Header", "Optional Header", "Optional Header Data
 * Directories", "Section Table", "The .edata Section", "The .idata
 * Section", "Delay-Load Directory Table", "The .rsrc Section"). Offsets are
 * in bytes from the start of their structure. Internal to the PE reader. */
#ifndef AITK_LIBDEPS_PE_FORMAT_H
#define AITK_LIBDEPS_PE_FORMAT_H

/* MS-DOS stub: "MZ" at offset 0, the PE header's file offset at 0x3c. */
#define PE_DOS_MAGIC 0x5a4du
#define PE_DOS_E_LFANEW 0x3c
#define PE_DOS_HEADER_SIZE 64
/* "PE\0\0" at e_lfanew, then the COFF file header. */
#define PE_SIGNATURE 0x00004550u
#define PE_SIGNATURE_SIZE 4

/* COFF file header (20 bytes). */
#define PE_COFF_MACHINE 0
#define PE_COFF_NUMBER_OF_SECTIONS 2
#define PE_COFF_SIZE_OF_OPTIONAL_HEADER 16
#define PE_COFF_CHARACTERISTICS 18
#define PE_COFF_HEADER_SIZE 20

/* Optional header: Magic tells PE32 from PE32+, which moves later fields. */
#define PE_OPT_MAGIC 0
#define PE_OPT_MAGIC_PE32 0x10bu
#define PE_OPT_MAGIC_PE32PLUS 0x20bu
#define PE_OPT_IMAGE_BASE_PE32 28     /* 4 bytes */
#define PE_OPT_IMAGE_BASE_PE32PLUS 24 /* 8 bytes */
#define PE_OPT_SIZE_OF_HEADERS 60
#define PE_OPT_NUMBER_OF_RVA_AND_SIZES_PE32 92
#define PE_OPT_NUMBER_OF_RVA_AND_SIZES_PE32PLUS 108
/* The data directories follow NumberOfRvaAndSizes: where they start is
 * also the smallest optional header that holds every fixed field. */
#define PE_OPT_DATA_DIRECTORIES_PE32 96
#define PE_OPT_DATA_DIRECTORIES_PE32PLUS 112

/* Data directories: 8 bytes each (VirtualAddress, Size), by index. */
#define PE_DATA_DIRECTORY_SIZE 8
#define PE_DIR_EXPORT_TABLE 0
#define PE_DIR_IMPORT_TABLE 1
#define PE_DIR_RESOURCE_TABLE 2
#define PE_DIR_DELAY_IMPORT_DESCRIPTOR 13
#define PE_DIR_COUNT_READ 14 /* up to and with the delay-import descriptor */

/* Section table: 40 bytes a section. */
#define PE_SECTION_HEADER_SIZE 40
#define PE_SECTION_VIRTUAL_SIZE 8
#define PE_SECTION_VIRTUAL_ADDRESS 12
#define PE_SECTION_SIZE_OF_RAW_DATA 16
#define PE_SECTION_POINTER_TO_RAW_DATA 20

/* Export directory table (40 bytes). */
#define PE_EXPORT_DIRECTORY_SIZE 40
#define PE_EXPORT_ORDINAL_BASE 16
#define PE_EXPORT_ADDRESS_TABLE_ENTRIES 20
#define PE_EXPORT_NUMBER_OF_NAME_POINTERS 24
#define PE_EXPORT_ADDRESS_TABLE_RVA 28
#define PE_EXPORT_NAME_POINTER_RVA 32
#define PE_EXPORT_ORDINAL_TABLE_RVA 36

/* Import directory table: 20 bytes a DLL. */
#define PE_IMPORT_DESCRIPTOR_SIZE 20
#define PE_IMPORT_LOOKUP_TABLE_RVA 0
#define PE_IMPORT_NAME_RVA 12
#define PE_IMPORT_ADDRESS_TABLE_RVA 16
/* Import lookup table entries: 4 bytes in PE32, 8 in PE32+. The top bit
 * marks an import by ordinal (the low 16 bits); otherwise the low 31 bits
 * are the RVA of a hint/name entry, a 2-byte hint then the name. */
#define PE_ILT_ORDINAL_FLAG_PE32 ((uint64_t)1 << 31)
#define PE_ILT_ORDINAL_FLAG_PE32PLUS ((uint64_t)1 << 63)
#define PE_ILT_ORDINAL_MASK 0xffffu
#define PE_ILT_HINT_NAME_RVA_MASK 0x7fffffffu
#define PE_HINT_SIZE 2

/* Delay-load directory table: 32 bytes a DLL. The document says Attributes
 * "must be zero"; the SDK's delayimp.h names bit 0 dlattrRva: set, the
 * fields are RVAs; clear (Visual C++ 6 images), virtual addresses. */
#define PE_DELAY_DESCRIPTOR_SIZE 32
#define PE_DELAY_ATTRIBUTES 0
#define PE_DELAY_NAME 4
#define PE_DELAY_IMPORT_NAME_TABLE 16
#define PE_DELAY_ATTR_RVA 1u

/* Resource directory table (16 bytes), then its entries, 8 bytes each: an
 * ID and an offset whose high bit says "another directory" and whose other
 * bits are its offset in the resource section. */
#define PE_RES_NUMBER_OF_NAME_ENTRIES 12
#define PE_RES_NUMBER_OF_ID_ENTRIES 14
#define PE_RES_DIRECTORY_SIZE 16
#define PE_RES_ENTRY_SIZE 8
#define PE_RES_ENTRY_ID 0
#define PE_RES_ENTRY_OFFSET 4
#define PE_RES_SUBDIRECTORY 0x80000000u
#define PE_RES_OFFSET_MASK 0x7fffffffu
/* A resource data entry: the data's RVA, then its size. */
#define PE_RES_DATA_RVA 0
#define PE_RES_DATA_SIZE 4
/* RT_VERSION (winuser.h, "Resource Types"). */
#define PE_RT_VERSION 16
/* VS_FIXEDFILEINFO (verrsrc.h): dwSignature, then dwStrucVersion, then the
 * file version, most significant 32 bits first. */
#define PE_VS_FFI_SIGNATURE 0xfeef04bdu
#define PE_VS_FFI_FILE_VERSION_MS 8
#define PE_VS_FFI_FILE_VERSION_LS 12
#define PE_VS_FFI_MIN_SIZE 16

#endif
