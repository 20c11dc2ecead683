//! Deliberately provoked compile panics, in their own test binary: the checking mode is
//! process-wide, and the tests here switch it. Panics are charged per thread (stream), which
//! the two-thread test checks.

#[cfg(feature = "wgpu")]
mod wgpu {
    use cubeport::cubecl;
    use cubeport::cubecl::prelude::*;
    use cubeport::{DeviceTensor, Error};

    /// `sync_async_proxy_shared` (a fence for Hopper's TMA) has neither a WGSL nor a SPIR-V
    /// form: either cubecl compiler panics on its device thread and drops the panic, so a bare
    /// launch would "succeed" and leave the output unwritten. (`sync_plane`, used before, has a
    /// SPIR-V form and compiles in `wgpu-spirv` builds.)
    #[cube(launch)]
    fn uses_tma_fence(out: &mut Array<f32>) {
        sync_async_proxy_shared();
        out[UNIT_POS as usize] = 1.0;
    }

    #[test]
    fn wgpu_swallowed_compile_panic_is_an_error() {
        let client = match cubeport::backends::wgpu_client() {
            Ok(c) => c,
            Err(e) => {
                return cubeport::testing::skip(
                    "wgpu_swallowed_compile_panic_is_an_error",
                    "wgpu",
                    &e.to_string(),
                );
            }
        };
        let out = client.create_from_slice(bytemuck::cast_slice(&[0.5f32; 4]));
        let r = cubeport::checked_launch(&client, "uses_tma_fence", || {
            uses_tma_fence::launch::<cubecl::wgpu::WgpuRuntime>(
                &client,
                CubeCount::new_single(),
                CubeDim::new_1d(4),
                // SAFETY: `out` holds 4 f32.
                unsafe { ArrayArg::from_raw_parts(out.clone(), 4) },
            );
            Ok(())
        });
        assert!(
            matches!(&r, Err(Error::Launch { message, .. }) if message.contains("panicked")),
            "{r:?}"
        );
        // the process and the client go on
        let t = DeviceTensor::from_slice(&client, &[3.0f32], &[1]).unwrap();
        assert_eq!(t.to_vec(&client).unwrap(), vec![3.0]);
    }

    fn provoke(client: &ComputeClient<cubecl::wgpu::WgpuRuntime>, out: &cubecl::server::Handle) {
        uses_tma_fence::launch::<cubecl::wgpu::WgpuRuntime>(
            client,
            CubeCount::new_single(),
            CubeDim::new_1d(4),
            // SAFETY: `out` holds 4 f32.
            unsafe { ArrayArg::from_raw_parts(out.clone(), 4) },
        );
    }

    /// A failure queued behind ops surfaces in every checking mode: with `EveryOp` at the very
    /// next op, with `FirstLaunch` at the latest at the next sync and the next read; and a
    /// panic provoked on one thread is never reported by another thread's ops.
    #[test]
    fn wgpu_deferred_failures_surface_in_every_mode_and_per_thread() {
        use cubeport::Checking;
        let client = match cubeport::backends::wgpu_client() {
            Ok(c) => c,
            Err(e) => {
                return cubeport::testing::skip(
                    "wgpu_deferred_failures_surface_in_every_mode_and_per_thread",
                    "wgpu",
                    &e.to_string(),
                );
            }
        };
        let out = client.create_from_slice(bytemuck::cast_slice(&[0.5f32; 4]));
        let x = DeviceTensor::from_slice(&client, &[1.0f32, 2.0, 3.0], &[3]).unwrap();
        let b = DeviceTensor::from_slice(&client, &[0.5f32, 0.5, 0.5], &[3]).unwrap();
        let mut y = DeviceTensor::<f32>::empty(&client, &[3]).unwrap();
        let is_panic = |r: &Result<(), Error>| matches!(r, Err(Error::Launch { message, .. }) if message.contains("panicked"));

        // EveryOp: the op after the bare launch flushes it and reports the panic.
        cubeport::set_checking(Checking::EveryOp);
        provoke(&client, &out);
        let r = cubeport::add_into(&client, x.as_ref(), b.as_ref(), y.as_mut());
        assert!(is_panic(&r), "EveryOp: {r:?}");
        cubeport::sync(&client).unwrap(); // reported once, then gone

        // FirstLaunch: a configuration seen before is queued without a check; the sync after it
        // reports the panic.
        cubeport::set_checking(Checking::FirstLaunch);
        cubeport::add_into(&client, x.as_ref(), b.as_ref(), y.as_mut()).unwrap();
        provoke(&client, &out);
        let _ = cubeport::add_into(&client, x.as_ref(), b.as_ref(), y.as_mut());
        let r = cubeport::sync(&client);
        assert!(is_panic(&r), "FirstLaunch, sync: {r:?}");
        // ... and a read reports it too.
        provoke(&client, &out);
        let r = y.to_vec(&client).map(drop);
        assert!(is_panic(&r), "FirstLaunch, read: {r:?}");
        // The op's own result is intact once nothing is pending.
        cubeport::add_into(&client, x.as_ref(), b.as_ref(), y.as_mut()).unwrap();
        assert_eq!(y.to_vec(&client).unwrap(), vec![1.5, 2.5, 3.5]);

        // Two threads on one client: one provokes panics, the other's ops and syncs never see
        // them, in either mode.
        for mode in [Checking::FirstLaunch, Checking::EveryOp] {
            cubeport::set_checking(mode);
            let stop = std::sync::atomic::AtomicBool::new(false);
            std::thread::scope(|scope| {
                let provoker = scope.spawn(|| {
                    let mut seen = 0;
                    for _ in 0..20 {
                        let r = cubeport::checked_launch(&client, "uses_tma_fence", || {
                            provoke(&client, &out);
                            Ok(())
                        });
                        seen += usize::from(is_panic(&r));
                    }
                    stop.store(true, std::sync::atomic::Ordering::SeqCst);
                    seen
                });
                let mut y = DeviceTensor::<f32>::empty(&client, &[3]).unwrap();
                let mut ops = 0;
                while !stop.load(std::sync::atomic::Ordering::SeqCst) || ops < 20 {
                    cubeport::add_into(&client, x.as_ref(), b.as_ref(), y.as_mut())
                        .unwrap_or_else(|e| panic!("{mode:?}: clean thread charged: {e}"));
                    cubeport::sync(&client)
                        .unwrap_or_else(|e| panic!("{mode:?}: clean thread's sync: {e}"));
                    ops += 1;
                }
                assert_eq!(y.to_vec(&client).unwrap(), vec![1.5, 2.5, 3.5]);
                assert_eq!(
                    provoker.join().unwrap(),
                    20,
                    "{mode:?}: provoker saw each panic"
                );
            });
        }
        cubeport::set_checking(Checking::FirstLaunch);
    }
}
