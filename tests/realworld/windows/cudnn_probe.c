/* The run-time oracle for cuDNN's sub-DLLs (cudnn_opened.py): in its own
 * process, do what `import torch` does with torch\lib on Windows (every DLL
 * of the folder loaded by path: AddDllDirectory, then LoadLibraryExW with
 * LOAD_LIBRARY_SEARCH_DEFAULT_DIRS | LOAD_LIBRARY_SEARCH_DLL_LOAD_DIR, as
 * torch/__init__.py of the torch 2.4.1 win_amd64 wheel does), then make the
 * first call into cuDNN, cudnnGetVersion, which needs cudnn_graph64_9.dll
 * and loads it by name.
 *
 * usage: cudnn_probe.exe DIR DLL...   (the DLLs of DIR, cudnn64_9.dll first)
 * Prints "preload NAME: error N" for each DLL that did not load, then
 * "version N" when the call returned. When cuDNN cannot find a sub-DLL it
 * prints its own message and ends the process itself. */
#include <stdio.h>
#include <windows.h>

typedef size_t (*version_fn)(void);

int wmain(int argc, wchar_t **argv)
{
    if (argc < 3) {
        fputs("usage: cudnn_probe.exe DIR DLL...\n", stderr);
        return 2;
    }
    SetErrorMode(SEM_FAILCRITICALERRORS | SEM_NOGPFAULTERRORBOX | SEM_NOOPENFILEERRORBOX);
    if (!AddDllDirectory(argv[1])) {
        printf("AddDllDirectory failed: error %lu\n", GetLastError());
        return 2;
    }
    HMODULE shim = NULL;
    for (int i = 2; i < argc; i++) {
        HMODULE h = LoadLibraryExW(argv[i], NULL, 0x00001100);
        if (!h)
            printf("preload %ls: error %lu\n", argv[i], GetLastError());
        if (i == 2)
            shim = h;
    }
    fflush(stdout);
    if (!shim)
        return 1;
    version_fn version = (version_fn)(void (*)(void))GetProcAddress(shim, "cudnnGetVersion");
    if (!version) {
        puts("no cudnnGetVersion");
        return 1;
    }
    printf("version %zu\n", version());
    fflush(stdout);
    TerminateProcess(GetCurrentProcess(), 0);
    return 0;
}
