//! HRESULTs the profiling API uses that are not in the team's constants.tsv
//! (winerror.h values), and the `HRESULT_FROM_WIN32` helper.

use crate::types::{HRESULT, ULONG};

/// `E_POINTER`: a required pointer was NULL.
pub const E_POINTER: HRESULT = 0x8000_4003_u32 as HRESULT;
/// `CLASS_E_NOAGGREGATION`: `CreateInstance` got a non-NULL outer unknown.
pub const CLASS_E_NOAGGREGATION: HRESULT = 0x8004_0110_u32 as HRESULT;
/// `CLASS_E_CLASSNOTAVAILABLE`: `DllGetClassObject` does not serve this CLSID.
pub const CLASS_E_CLASSNOTAVAILABLE: HRESULT = 0x8004_0111_u32 as HRESULT;
/// Win32 `ERROR_INSUFFICIENT_BUFFER` (122).
pub const ERROR_INSUFFICIENT_BUFFER: ULONG = 122;

/// `HRESULT_FROM_WIN32(x)`: `x` itself if it is 0 or already negative as an HRESULT,
/// otherwise `0x80070000 | (x & 0xFFFF)`.
#[allow(non_snake_case)]
pub const fn HRESULT_FROM_WIN32(x: ULONG) -> HRESULT {
    if (x as HRESULT) <= 0 {
        x as HRESULT
    } else {
        ((x & 0x0000_FFFF) | 0x8007_0000) as HRESULT
    }
}

/// `SUCCEEDED(hr)`.
#[allow(non_snake_case)]
pub const fn SUCCEEDED(hr: HRESULT) -> bool {
    hr >= 0
}

/// `FAILED(hr)`.
#[allow(non_snake_case)]
pub const fn FAILED(hr: HRESULT) -> bool {
    hr < 0
}
