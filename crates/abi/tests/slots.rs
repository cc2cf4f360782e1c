//! Vtable slot order, sizes, field offsets and IIDs, checked against
//! `tests/data/interfaces.tsv` (a copy of the team's facts file).

use std::collections::BTreeMap;
use std::mem::{offset_of, size_of};

use eltrace_abi::*;

struct Row {
    iid: String,
    base: String,
    slot: usize,
    method: String,
}

/// interface -> its own rows, in file order.
fn tsv() -> BTreeMap<String, Vec<Row>> {
    let text = include_str!("data/interfaces.tsv");
    let mut out: BTreeMap<String, Vec<Row>> = BTreeMap::new();
    let mut header = true;
    for line in text.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        if header {
            assert_eq!(line, "interface\tiid\tbase\tvtable_slot\tmethod");
            header = false;
            continue;
        }
        let f: Vec<&str> = line.split('\t').collect();
        assert_eq!(f.len(), 5, "bad line {line:?}");
        out.entry(f[0].to_string()).or_default().push(Row {
            iid: f[1].to_string(),
            base: f[2].to_string(),
            slot: f[3].parse().unwrap(),
            method: f[4].to_string(),
        });
    }
    out
}

/// Every slot of `iface` in order, inherited ones first, from the tsv.
fn full_slots(t: &BTreeMap<String, Vec<Row>>, iface: &str) -> Vec<(usize, String)> {
    let rows = &t[iface];
    let base = &rows[0].base;
    let mut v = if base == "-" {
        Vec::new()
    } else {
        full_slots(t, base)
    };
    let mut own: Vec<(usize, String)> = rows.iter().map(|r| (r.slot, r.method.clone())).collect();
    own.sort();
    v.extend(own);
    v
}

fn parse_guid(s: &str) -> GUID {
    let hex: String = s
        .trim_matches(|c| c == '{' || c == '}')
        .chars()
        .filter(|&c| c != '-')
        .collect();
    assert_eq!(hex.len(), 32, "bad guid {s}");
    GUID::from_u128(u128::from_str_radix(&hex, 16).unwrap())
}

struct Facts {
    name: &'static str,
    slots: &'static [&'static str],
    size: usize,
    iid: GUID,
}

fn facts<V: Interface>() -> Facts {
    Facts {
        name: V::NAME,
        slots: V::SLOT_NAMES,
        size: size_of::<V>(),
        iid: V::IID,
    }
}

fn all() -> Vec<Facts> {
    vec![
        facts::<IUnknownVtbl>(),
        facts::<IClassFactoryVtbl>(),
        facts::<IMethodMallocVtbl>(),
        facts::<ICorProfilerCallbackVtbl>(),
        facts::<ICorProfilerCallback2Vtbl>(),
        facts::<ICorProfilerCallback3Vtbl>(),
        facts::<ICorProfilerCallback4Vtbl>(),
        facts::<ICorProfilerCallback5Vtbl>(),
        facts::<ICorProfilerCallback6Vtbl>(),
        facts::<ICorProfilerCallback7Vtbl>(),
        facts::<ICorProfilerCallback8Vtbl>(),
        facts::<ICorProfilerCallback9Vtbl>(),
        facts::<ICorProfilerCallback10Vtbl>(),
        facts::<ICorProfilerCallback11Vtbl>(),
        facts::<ICorProfilerInfoVtbl>(),
        facts::<ICorProfilerInfo2Vtbl>(),
        facts::<ICorProfilerInfo3Vtbl>(),
        facts::<ICorProfilerInfo4Vtbl>(),
        facts::<ICorProfilerInfo5Vtbl>(),
        facts::<ICorProfilerInfo6Vtbl>(),
        facts::<ICorProfilerInfo7Vtbl>(),
        facts::<ICorProfilerInfo8Vtbl>(),
        facts::<ICorProfilerInfo9Vtbl>(),
        facts::<ICorProfilerInfo10Vtbl>(),
        facts::<ICorProfilerInfo11Vtbl>(),
        facts::<ICorProfilerInfo12Vtbl>(),
        facts::<ICorProfilerInfo13Vtbl>(),
        facts::<ICorProfilerInfo14Vtbl>(),
        facts::<ICorProfilerInfo15Vtbl>(),
        facts::<ICorProfilerFunctionControlVtbl>(),
        facts::<ICorProfilerFunctionEnumVtbl>(),
        facts::<ICorProfilerModuleEnumVtbl>(),
        facts::<ICorProfilerObjectEnumVtbl>(),
        facts::<ICorProfilerMethodEnumVtbl>(),
        facts::<ICorProfilerThreadEnumVtbl>(),
        facts::<ICorProfilerAssemblyReferenceProviderVtbl>(),
        facts::<IMetaDataImportVtbl>(),
        facts::<IMetaDataImport2Vtbl>(),
    ]
}

#[test]
fn every_tsv_interface_has_a_vtable() {
    let t = tsv();
    let ours: Vec<&str> = all().iter().map(|f| f.name).collect();
    for name in t.keys() {
        assert!(ours.contains(&name.as_str()), "no vtable for {name}");
    }
    assert_eq!(ours.len(), t.len(), "vtables not in the tsv");
}

#[test]
fn slot_names_match_tsv_order() {
    let t = tsv();
    for f in all() {
        let want = full_slots(&t, f.name);
        for (i, (slot, _)) in want.iter().enumerate() {
            assert_eq!(*slot, i, "{}: tsv slots not contiguous at {i}", f.name);
        }
        let want: Vec<&str> = want.iter().map(|(_, m)| m.as_str()).collect();
        assert_eq!(f.slots, want.as_slice(), "{}", f.name);
    }
}

#[test]
fn vtable_size_is_one_word_per_slot() {
    for f in all() {
        assert_eq!(f.size, 8 * f.slots.len(), "{}", f.name);
    }
}

#[test]
fn iids_match_tsv() {
    let t = tsv();
    for f in all() {
        let rows = &t[f.name];
        for r in rows {
            assert_eq!(r.iid, rows[0].iid, "{}: several IIDs", f.name);
        }
        assert_eq!(f.iid, parse_guid(&rows[0].iid), "{}", f.name);
        assert_eq!(f.iid.to_string(), rows[0].iid.to_uppercase(), "{}", f.name);
    }
    assert_eq!(IID_IUnknown, IUnknownVtbl::IID);
    assert_eq!(IID_IClassFactory, IClassFactoryVtbl::IID);
    assert_eq!(IID_ICorProfilerCallback11, ICorProfilerCallback11Vtbl::IID);
    assert_eq!(IID_ICorProfilerInfo15, ICorProfilerInfo15Vtbl::IID);
    assert_eq!(IID_IMetaDataImport2, IMetaDataImport2Vtbl::IID);
    assert_eq!(
        IID_ICorProfilerCallback,
        GUID::from_u128(0x176FBED1_A55C_4796_98CA_A9DA0EF883E7)
    );
}

/// Absolute slot of `method` in `iface` according to the tsv.
fn slot_of(t: &BTreeMap<String, Vec<Row>>, iface: &str, method: &str) -> usize {
    let v = full_slots(t, iface);
    let hits: Vec<usize> = v
        .iter()
        .filter(|(_, m)| m == method)
        .map(|(s, _)| *s)
        .collect();
    assert_eq!(hits.len(), 1, "{iface}::{method} in tsv: {hits:?}");
    hits[0]
}

/// `check!(t, Iface: A, B, ...)` asserts each field's offset is 8 * its tsv slot.
macro_rules! check {
    ($t:expr, $iface:ident / $vtbl:ty : $($m:ident),+ $(,)?) => {
        $(
            assert_eq!(
                offset_of!($vtbl, $m),
                8 * slot_of(&$t, stringify!($iface), stringify!($m)),
                concat!(stringify!($iface), "::", stringify!($m))
            );
        )+
    };
}

#[test]
fn named_fields_sit_at_their_slots() {
    let t = tsv();
    check!(t, IUnknown / IUnknownVtbl: QueryInterface, AddRef, Release);
    check!(t, IClassFactory / IClassFactoryVtbl: QueryInterface, Release, CreateInstance, LockServer);
    check!(t, IMethodMalloc / IMethodMallocVtbl: Alloc);
    check!(t, ICorProfilerCallback / ICorProfilerCallbackVtbl:
        QueryInterface, Initialize, Shutdown, ModuleLoadFinished, ClassLoadFinished,
        JITCompilationStarted, JITCompilationFinished, JITInlining, ThreadCreated,
        ThreadDestroyed, ThreadAssignedToOSThread, ExceptionThrown, ExceptionSearchFunctionEnter,
        ExceptionUnwindFunctionEnter, ExceptionUnwindFunctionLeave, ExceptionCatcherEnter,
        ExceptionCatcherLeave, ExceptionCLRCatcherExecute);
    check!(t, ICorProfilerCallback2 / ICorProfilerCallback2Vtbl:
        Initialize, ThreadNameChanged, GarbageCollectionStarted, HandleDestroyed);
    check!(t, ICorProfilerCallback3 / ICorProfilerCallback3Vtbl:
        InitializeForAttach, ProfilerAttachComplete, ProfilerDetachSucceeded);
    check!(t, ICorProfilerCallback4 / ICorProfilerCallback4Vtbl:
        ReJITCompilationStarted, GetReJITParameters, SurvivingReferences2);
    check!(t, ICorProfilerCallback5 / ICorProfilerCallback5Vtbl: ConditionalWeakTableElementReferences);
    check!(t, ICorProfilerCallback6 / ICorProfilerCallback6Vtbl: GetAssemblyReferences);
    check!(t, ICorProfilerCallback7 / ICorProfilerCallback7Vtbl: ModuleInMemorySymbolsUpdated);
    check!(t, ICorProfilerCallback8 / ICorProfilerCallback8Vtbl:
        DynamicMethodJITCompilationStarted, DynamicMethodJITCompilationFinished);
    check!(t, ICorProfilerCallback9 / ICorProfilerCallback9Vtbl: DynamicMethodUnloaded);
    check!(t, ICorProfilerCallback10 / ICorProfilerCallback10Vtbl:
        EventPipeEventDelivered, EventPipeProviderCreated);
    check!(t, ICorProfilerCallback11 / ICorProfilerCallback11Vtbl:
        QueryInterface, AddRef, Release, Initialize, Shutdown, JITCompilationStarted,
        ThreadCreated, ThreadDestroyed, ThreadAssignedToOSThread, ExceptionThrown,
        ExceptionUnwindFunctionLeave, ExceptionCatcherEnter, ThreadNameChanged,
        InitializeForAttach, ReJITError, DynamicMethodUnloaded, EventPipeProviderCreated,
        LoadAsNotificationOnly);

    check!(t, ICorProfilerInfo / ICorProfilerInfoVtbl:
        GetClassFromObject, GetEventMask, GetFunctionFromIP, GetThreadInfo,
        GetCurrentThreadID, GetClassIDInfo, GetFunctionInfo, SetEventMask,
        SetEnterLeaveFunctionHooks, SetFunctionIDMapper, GetTokenAndMetaDataFromFunction,
        GetModuleInfo, GetModuleMetaData, ForceGC, GetILToNativeMapping);
    check!(t, ICorProfilerInfo2 / ICorProfilerInfo2Vtbl:
        DoStackSnapshot, SetEnterLeaveFunctionHooks2, GetFunctionInfo2, GetClassIDInfo2,
        GetNotifiedExceptionClauseInfo);
    check!(t, ICorProfilerInfo3 / ICorProfilerInfo3Vtbl:
        SetEventMask, GetFunctionInfo, EnumJITedFunctions, SetFunctionIDMapper2,
        SetEnterLeaveFunctionHooks3, SetEnterLeaveFunctionHooks3WithInfo,
        GetFunctionEnter3Info, GetFunctionLeave3Info, GetFunctionTailcall3Info,
        GetRuntimeInformation, GetModuleInfo2);
    check!(t, ICorProfilerInfo4 / ICorProfilerInfo4Vtbl:
        EnumThreads, InitializeCurrentThread, GetFunctionFromIP2, GetObjectSize2);
    check!(t, ICorProfilerInfo5 / ICorProfilerInfo5Vtbl: GetEventMask2, SetEventMask2);
    check!(t, ICorProfilerInfo6 / ICorProfilerInfo6Vtbl: EnumNgenModuleMethodsInliningThisMethod);
    check!(t, ICorProfilerInfo7 / ICorProfilerInfo7Vtbl: ApplyMetaData, ReadInMemorySymbols);
    check!(t, ICorProfilerInfo8 / ICorProfilerInfo8Vtbl:
        IsFunctionDynamic, GetFunctionFromIP3, GetDynamicFunctionInfo);
    check!(t, ICorProfilerInfo9 / ICorProfilerInfo9Vtbl: GetNativeCodeStartAddresses, GetCodeInfo4);
    check!(t, ICorProfilerInfo10 / ICorProfilerInfo10Vtbl:
        EnumerateObjectReferences, SuspendRuntime, ResumeRuntime);
    check!(t, ICorProfilerInfo11 / ICorProfilerInfo11Vtbl: GetEnvironmentVariable, SetEnvironmentVariable);
    check!(t, ICorProfilerInfo12 / ICorProfilerInfo12Vtbl: EventPipeStartSession, EventPipeWriteEvent);
    check!(t, ICorProfilerInfo13 / ICorProfilerInfo13Vtbl: CreateHandle, GetObjectIDFromHandle);
    check!(t, ICorProfilerInfo14 / ICorProfilerInfo14Vtbl: EnumerateNonGCObjects, EventPipeCreateProvider2);
    check!(t, ICorProfilerInfo15 / ICorProfilerInfo15Vtbl:
        QueryInterface, SetEventMask, GetEventMask, GetFunctionInfo, GetModuleInfo,
        GetModuleMetaData, GetCurrentThreadID, GetThreadInfo, GetFunctionFromIP,
        GetClassIDInfo, ForceGC, GetFunctionInfo2, DoStackSnapshot, GetClassIDInfo2,
        SetEnterLeaveFunctionHooks3, SetEnterLeaveFunctionHooks3WithInfo, SetFunctionIDMapper2,
        GetFunctionEnter3Info, GetFunctionLeave3Info, GetFunctionTailcall3Info,
        GetRuntimeInformation, GetEventMask2, SetEventMask2, SuspendRuntime, ResumeRuntime,
        EnumerateGCHeapObjects);

    check!(t, ICorProfilerFunctionControl / ICorProfilerFunctionControlVtbl:
        SetCodegenFlags, SetILFunctionBody, SetILInstrumentedCodeMap);
    check!(t, ICorProfilerFunctionEnum / ICorProfilerFunctionEnumVtbl: Skip, Next);
    check!(t, ICorProfilerModuleEnum / ICorProfilerModuleEnumVtbl: Skip, Next);
    check!(t, ICorProfilerObjectEnum / ICorProfilerObjectEnumVtbl: Skip, Next);
    check!(t, ICorProfilerMethodEnum / ICorProfilerMethodEnumVtbl: Skip, Next);
    check!(t, ICorProfilerThreadEnum / ICorProfilerThreadEnumVtbl: Skip, Next);
    check!(t, ICorProfilerAssemblyReferenceProvider / ICorProfilerAssemblyReferenceProviderVtbl:
        AddAssemblyReference);

    check!(t, IMetaDataImport / IMetaDataImportVtbl:
        CloseEnum, EnumTypeDefs, GetScopeProps, GetModuleFromScope, GetTypeDefProps,
        GetTypeRefProps, GetMethodProps, GetMemberRefProps, GetSigFromToken,
        GetNameFromToken, IsValidToken, GetNestedClassProps, IsGlobal);
    check!(t, IMetaDataImport2 / IMetaDataImport2Vtbl:
        CloseEnum, GetMethodProps, GetTypeDefProps, GetNestedClassProps, GetTypeRefProps,
        GetModuleFromScope, GetScopeProps, EnumGenericParams, GetGenericParamProps,
        GetMethodSpecProps, GetVersionString, EnumMethodSpecs);
}
