/*
 * bcryptprimitives.dll for Wine before 8.13, which has none: Go's Windows
 * runtime takes its random bytes from ProcessPrng and stops at start
 * without it ("bcryptprimitives.dll not found"). This ProcessPrng fills
 * the buffer from the system's preferred random number generator.
 *
 * Built by the Wine tests (internal/wine) with MinGW-w64:
 *   x86_64-w64-mingw32-gcc -shared -O2 -s -o bcryptprimitives.dll bcryptprimitives.c -lbcrypt
 * and copied into the Wine prefix's C:\windows\system32.
 */
#include <windows.h>
#include <bcrypt.h>

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T len)
{
    while (len > 0) {
        /* BCryptGenRandom takes at most a ULONG at a time. */
        ULONG n = len > 0x40000000 ? 0x40000000 : (ULONG)len;
        if (!BCRYPT_SUCCESS(BCryptGenRandom(NULL, data, n, BCRYPT_USE_SYSTEM_PREFERRED_RNG)))
            return FALSE;
        data += n;
        len -= n;
    }
    return TRUE;
}
