/*
 * ProcessPrng, the one function Rust's standard library imports from
 * bcryptprimitives.dll (since Rust 1.78) for its random hash keys. Windows 10
 * and later have that DLL; Wine 8 (Debian 12's) does not, so every Rust
 * program fails to start under it with "bcryptprimitives.dll not found".
 * .ci/wine builds this stand-in with mingw-w64 and puts it in Wine's
 * system32. It asks advapi32's RtlGenRandom, which Wine has, for the bytes.
 * Wine 8.13 and later ship the DLL (Debian 13 has Wine 10), and this file
 * goes once CI runs on such a Wine.
 */
#include <windows.h>
#include <ntsecapi.h>

BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length)
{
    /* RtlGenRandom takes a ULONG length: ask in pieces that fit. */
    while (length > 0) {
        ULONG piece = length > 0x10000000 ? 0x10000000 : (ULONG)length;
        if (!RtlGenRandom(data, piece))
            return FALSE;
        data += piece;
        length -= piece;
    }
    return TRUE;
}
