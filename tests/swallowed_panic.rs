//! A deliberately provoked compile panic, in its own test binary (its own process): the panic
//! guard behind `cubeport::checked_launch` is process-wide, so a panic provoked here would be
//! reported by whichever other op happened to be in flight on the same device.

#[cfg(feature = "wgpu")]
mod wgsl {
    use cubeport::cubecl;
    use cubeport::cubecl::prelude::*;
    use cubeport::{DeviceTensor, Error};

    /// `sync_plane` has no WGSL form: cubecl's WGSL compiler panics on its device thread and
    /// drops the panic, so a bare launch would "succeed" and leave the output unwritten.
    #[cube(launch)]
    fn uses_sync_plane(out: &mut Array<f32>) {
        sync_plane();
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
        let r = cubeport::checked_launch(&client, "uses_sync_plane", || {
            uses_sync_plane::launch::<cubecl::wgpu::WgpuRuntime>(
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
}
