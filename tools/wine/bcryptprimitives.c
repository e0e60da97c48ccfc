/* A stand-in for bcryptprimitives.dll, which Debian 12's Wine 8.0 lacks: Go's runtime (1.24 and
 * later) calls its ProcessPrng at start-up and dies without it. ProcessPrng fills a buffer with
 * random bytes and never fails; RtlGenRandom (advapi32's SystemFunction036) does the same. */
#include <windows.h>

typedef BOOLEAN(WINAPI *genrandom)(PVOID, ULONG);

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len) {
    static genrandom gen;
    if (!gen)
        gen = (genrandom)GetProcAddress(LoadLibraryA("advapi32.dll"), "SystemFunction036");
    while (len > 0) {
        ULONG n = len > 0x40000000 ? 0x40000000 : (ULONG)len;
        if (!gen || !gen(data, n))
            return FALSE;
        data += n;
        len -= n;
    }
    return TRUE;
}
