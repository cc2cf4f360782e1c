//! COM plumbing: [`GUID`], the interface-pointer layout [`ComObject`], the [`Interface`]
//! trait every vtable implements, and the `com_interface!` macro that declares vtables.
//!
//! # Calling through an interface pointer
//!
//! A COM interface pointer points at an object whose first word is a pointer to the
//! vtable; every method takes the interface pointer itself as its first (`this`)
//! argument. With `p: *mut ICorProfilerInfo3` (= `*mut ComObject<ICorProfilerInfo3Vtbl>`):
//!
//! ```no_run
//! # use eltrace_abi::*;
//! # unsafe fn demo(p: *mut ICorProfilerInfo3) -> HRESULT {
//! // SAFETY: p is a live ICorProfilerInfo3 pointer handed out by the runtime.
//! unsafe { ((*(*p).vtbl).SetEventMask)(p.cast(), COR_PRF_MONITOR_ENTERLEAVE) }
//! # }
//! ```

use core::fmt;

/// A 128-bit COM GUID (IID, CLSID) in its in-memory layout.
#[repr(C)]
#[derive(Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct GUID {
    /// First 8 hex digits.
    pub data1: u32,
    /// Next 4 hex digits.
    pub data2: u16,
    /// Next 4 hex digits.
    pub data3: u16,
    /// Last 16 hex digits, in textual order.
    pub data4: [u8; 8],
}

impl GUID {
    /// The all-zero GUID (`GUID_NULL`).
    pub const NULL: GUID = GUID::new(0, 0, 0, [0; 8]);

    /// Builds a GUID from its four fields.
    pub const fn new(data1: u32, data2: u16, data3: u16, data4: [u8; 8]) -> GUID {
        GUID {
            data1,
            data2,
            data3,
            data4,
        }
    }

    /// Builds a GUID from the number its text spells, so that
    /// `{176FBED1-A55C-4796-98CA-A9DA0EF883E7}` is written
    /// `GUID::from_u128(0x176FBED1_A55C_4796_98CA_A9DA0EF883E7)`.
    pub const fn from_u128(v: u128) -> GUID {
        let d4 = ((v & 0xFFFF_FFFF_FFFF_FFFF) as u64).to_be_bytes();
        GUID::new((v >> 96) as u32, (v >> 80) as u16, (v >> 64) as u16, d4)
    }

    /// The inverse of [`GUID::from_u128`].
    pub const fn to_u128(self) -> u128 {
        ((self.data1 as u128) << 96)
            | ((self.data2 as u128) << 80)
            | ((self.data3 as u128) << 64)
            | (u64::from_be_bytes(self.data4) as u128)
    }
}

/// Formats as the registry form `{XXXXXXXX-XXXX-XXXX-XXXX-XXXXXXXXXXXX}` (upper case).
impl fmt::Display for GUID {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let d = &self.data4;
        write!(
            f,
            "{{{:08X}-{:04X}-{:04X}-{:02X}{:02X}-{:02X}{:02X}{:02X}{:02X}{:02X}{:02X}}}",
            self.data1, self.data2, self.data3, d[0], d[1], d[2], d[3], d[4], d[5], d[6], d[7]
        )
    }
}

impl fmt::Debug for GUID {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

/// The layout of a COM interface pointer's target: its first word is the vtable pointer.
///
/// Interface types are aliases of this, e.g. `ICorProfilerInfo3 = ComObject<ICorProfilerInfo3Vtbl>`.
/// An object implementing an interface (such as the profiler's callback object) may put
/// more fields after `vtbl`; pointers to it can be cast to `*mut ComObject<V>`.
#[repr(C)]
pub struct ComObject<V> {
    /// The object's vtable.
    pub vtbl: *const V,
}

/// Facts every generated vtable type carries.
pub trait Interface {
    /// The interface's IID.
    const IID: GUID;
    /// The interface name (`"ICorProfilerInfo3"`).
    const NAME: &'static str;
    /// The method names of every vtable slot, in slot order (inherited slots first).
    const SLOT_NAMES: &'static [&'static str];
}

/// Declares a vtable struct `$vtbl` (one `unsafe extern "C" fn` field per slot, in order),
/// its `SLOT_NAMES` and `IID`, the constant `$iid_const`, and the interface alias
/// `$iface = ComObject<$vtbl>`. The entries list every slot including inherited ones;
/// a `this: *mut c_void` first parameter is added to each.
macro_rules! com_interface {
    (
        $(#[$attr:meta])*
        interface $iface:ident, $vtbl:ident, $iid_const:ident = $iid:expr;
        {
            $( $(#[$mattr:meta])* $method:ident ( $( $p:ident : $t:ty ),* $(,)? ) $( -> $ret:ty )? ; )*
        }
    ) => {
        $(#[$attr])*
        #[repr(C)]
        #[derive(Clone, Copy)]
        #[allow(non_snake_case)]
        pub struct $vtbl {
            $(
                $(#[$mattr])*
                pub $method: unsafe extern "C" fn(this: *mut c_void $(, $p: $t)*) $(-> $ret)?,
            )*
        }

        impl $vtbl {
            #[doc = concat!("IID of `", stringify!($iface), "`.")]
            pub const IID: GUID = $iid;
            /// Method names of every slot, in slot order (inherited slots first).
            pub const SLOT_NAMES: &'static [&'static str] = &[$(stringify!($method)),*];
        }

        impl $crate::com::Interface for $vtbl {
            const IID: GUID = $iid;
            const NAME: &'static str = stringify!($iface);
            const SLOT_NAMES: &'static [&'static str] = <$vtbl>::SLOT_NAMES;
        }

        #[doc = concat!("IID of `", stringify!($iface), "`.")]
        #[allow(non_upper_case_globals)]
        pub const $iid_const: GUID = $iid;

        $(#[$attr])*
        pub type $iface = $crate::com::ComObject<$vtbl>;
    };
}
pub(crate) use com_interface;
