//! A launch path for the small, hot kernels that skips one cost of cubecl 0.10's generated
//! `launch_unchecked`: it hands cubecl's per-thread launch scope a fresh deep copy of the
//! client's `DeviceProperties` (its type and size maps) on every launch. Here the copy is made
//! once per client and thread and the scope gets a reference-counted handle to it. Everything
//! else is what the generated launcher does: settings, the scope's type and size registrations,
//! the arguments' registration, the kernel's `new`, `KernelLauncher::launch_unchecked`.
//!
//! The properties are keyed by the address of the client's own copy. cubecl keeps one client
//! state per device for the process's life (`ComputeClient::load` returns clones of it), so
//! the address names one device's properties for as long as the process runs.

use cubecl::ir::DeviceProperties;
use cubecl::prelude::*;
use std::cell::RefCell;
use std::rc::Rc;

thread_local! {
    static SHARED: RefCell<Vec<(usize, Rc<DeviceProperties>)>> = const { RefCell::new(Vec::new()) };
}

/// Gives `scope` (cubecl's launch scope) `client`'s device properties without a deep copy once
/// this thread has made one for this client.
pub(crate) fn share_properties<R: Runtime>(scope: &mut Scope, client: &ComputeClient<R>) {
    let props = client.properties();
    let key = std::ptr::from_ref(props) as usize;
    let rc = SHARED.with_borrow_mut(|seen| {
        if let Some((_, rc)) = seen.iter().find(|(k, _)| *k == key) {
            return rc.clone();
        }
        let rc = Rc::new(props.clone());
        seen.push((key, rc.clone()));
        rc
    });
    if !scope
        .properties
        .as_ref()
        .is_some_and(|p| Rc::ptr_eq(p, &rc))
    {
        scope.properties = Some(rc);
    }
}

/// The generated `launch_unchecked` of a kernel generic over one float `F` and one vector
/// size `N` (cubecl's `_F` / `_N` markers in the kernel's module), with
/// [`share_properties`] in place of the properties' copy:
///
/// `launch_shared!(module::Kernel::<E, …>, client, count, dim, n, [(ArgType, arg), …], [comptime, …])`
///
/// The arguments are registered in the order given, which must be the kernel's parameter
/// order (as the generated launcher does); `n` is the vector size.
///
/// # Safety
/// As the generated `launch_unchecked`: the caller proves every access of the kernel in bounds.
macro_rules! launch_shared {
    ($m:ident :: $kernel:ident :: <$e:ty $(, $g:ty)* $(,)?>, $client:expr, $count:expr,
     $dim:expr, $n:expr, [$(($t:ty, $arg:expr)),* $(,)?], [$($ct:expr),* $(,)?]) => {{
        let client = $client;
        let n: usize = $n;
        let settings = KernelSettings::default()
            .cube_dim($dim)
            .address_type(AddressType::U32);
        let mut launcher = KernelLauncher::new(settings.clone());
        launcher.with_scope(|scope| {
            $crate::ops::launcher::share_properties(scope, client);
            scope.register_type::<DynamicScalar<$m::_F>>(
                <$e>::as_type_native_unchecked().storage_type(),
            );
            scope.register_size::<DynamicSize<$m::_N>>(n);
        });
        let kernel = $m::$kernel::<$e $(, $g)*, _>::new(
            settings,
            client.clone(),
            $(<$t as LaunchArg>::register($arg, &mut launcher),)*
            n,
            $($ct),*
        );
        launcher.launch_unchecked($count, kernel, client)
    }};
}
pub(crate) use launch_shared;
