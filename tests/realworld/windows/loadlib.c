/* The oracle of the real-world Windows corpus: Windows' own loader (here
 * Wine's) asked to load one DLL the way torch/__init__.py does it
 * (_load_dll_libraries in the torch 2.4.1 wheel): each folder of torch's
 * dll_paths added with AddDllDirectory, then LoadLibraryExW with
 * LOAD_LIBRARY_SEARCH_DEFAULT_DIRS | LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR
 * (0x00001100). It runs in its own process, never in the validator's.
 *
 * usage: loadlib.exe DLL [DLL_DIR...]
 * Prints "loaded" (exit 0) or "error N" with GetLastError (exit 1); 126 is
 * ERROR_MOD_NOT_FOUND, 127 ERROR_PROC_NOT_FOUND, 193 ERROR_BAD_EXE_FORMAT.
 * Built with mingw-w64 by run_corpus.py; its own folder is the application
 * folder, as python.exe's is. */
#include <stdio.h>
#include <windows.h>

int wmain(int argc, wchar_t **argv)
{
    if (argc < 2) {
        fputs("usage: loadlib.exe DLL [DLL_DIR...]\n", stderr);
        return 2;
    }
    /* No "missing DLL" dialog: nobody would answer it (torch does the same
     * with SetErrorMode(SEM_FAILCRITICALERRORS)). */
    SetErrorMode(SEM_FAILCRITICALERRORS | SEM_NOGPFAULTERRORBOX | SEM_NOOPENFILEERRORBOX);
    for (int i = 2; i < argc; i++)
        if (!AddDllDirectory(argv[i])) {
            printf("AddDllDirectory failed: error %lu\n", GetLastError());
            return 2;
        }
    HMODULE h = LoadLibraryExW(argv[1], NULL, 0x00001100);
    if (!h) {
        printf("error %lu\n", GetLastError());
        fflush(stdout);
        return 1;
    }
    puts("loaded");
    fflush(stdout);
    /* The question was whether it loads: end without running DllMain's
     * detach code of a library we only wanted bound. */
    TerminateProcess(GetCurrentProcess(), 0);
    return 0;
}
