//! How the main job and `cubeport bench` time a launch: batches between syncs, device timers
//! where the backend has them and the bench asks for them.

use cubeport::Error;
use cubeport::cubecl::prelude::*;
use cubeport::testing::sync;
use cubeport_cli::cases::Case;
use std::time::Instant;

/// How a batch of launches is timed.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Clock {
    /// Host clock between two device syncs (what a caller waits; includes launch overhead).
    Host,
    /// The backend's device timers through `client.profile` (wgpu timestamp queries; CUDA
    /// reports `TimingMethod::System`, i.e. host time, through the same call).
    Device,
}

/// Median seconds per launch of `run`, batched between syncs (`wait`), after a stabilizing
/// warm-up; with [`Clock::Device`] each batch is timed by the device's own timers.
pub(crate) fn time_launch<R: Runtime>(
    client: &ComputeClient<R>,
    quick: bool,
    clock: Clock,
    run: &mut (dyn FnMut() -> Result<(), Error> + Send),
    wait: &mut dyn FnMut() -> Result<(), Error>,
) -> Result<f64, Error> {
    if clock == Clock::Host {
        return time_host(quick, run, wait);
    }
    median_of_batches(quick, run, wait, &mut |run, wait, n| {
        wait()?;
        // One launch per profile. Profiles around batches of launches gave impossible times on
        // wgpu-Vulkan over NVIDIA's driver (as if the timestamps bracketed only part of the
        // batch); a single launch is all the timestamps have to bracket.
        let n = n.min(32);
        let mut total = 0.0;
        for _ in 0..n {
            let (out, duration) =
                client
                    .profile(&mut *run, "cubeport bench")
                    .map_err(|e| Error::Launch {
                        op: "profile",
                        message: e.to_string(),
                    })?;
            out?;
            total += cubeport::cubecl::future::block_on(duration.resolve())
                .duration()
                .as_secs_f64();
        }
        Ok(total / n as f64)
    })
}

/// [`time_launch`] on the host clock: what a caller waits, launch cost included.
pub(crate) fn time_host(
    quick: bool,
    run: &mut dyn FnMut() -> Result<(), Error>,
    wait: &mut dyn FnMut() -> Result<(), Error>,
) -> Result<f64, Error> {
    median_of_batches(quick, run, wait, &mut |run, wait, n| {
        wait()?;
        let t = Instant::now();
        for _ in 0..n {
            run()?;
        }
        wait()?;
        Ok(t.elapsed().as_secs_f64() / n as f64)
    })
}

type Launch<'a> = dyn FnMut() -> Result<(), Error> + 'a;

/// The shortest warm-up of a case, in seconds. A GPU left idle while the case's kernels
/// compiled (hundreds of ms for a first launch) clocks down, and ramps back over a time of
/// this order; two batches taken during the ramp can agree within 3% while both are slow, so
/// agreement alone would let the first case of a group be timed at idle clocks.
const MIN_WARM_UP: f64 = 0.2;

/// Batches sized to ~20 ms (5 with `quick`), warmed up for at least [`MIN_WARM_UP`] (not with
/// `quick`: the main job's and `bench --quick`'s rough figures) and until two batches agree
/// within 3%, then the median of 7 (3) batches timed by `timed(run, wait, launches)`.
fn median_of_batches<'a, F: ?Sized + FnMut() -> Result<(), Error> + 'a>(
    quick: bool,
    run: &mut F,
    wait: &mut Launch<'_>,
    timed: &mut dyn FnMut(&mut F, &mut Launch<'_>, usize) -> Result<f64, Error>,
) -> Result<f64, Error> {
    run()?;
    wait()?;
    let t = Instant::now();
    run()?;
    wait()?;
    let once = t.elapsed().as_secs_f64().max(1e-7);
    let target = if quick { 0.005 } else { 0.02 };
    let batch = ((target / once) as usize).clamp(1, 2000);
    let min_warm_up = if quick { 0.0 } else { MIN_WARM_UP };
    let warm_up = Instant::now();
    while warm_up.elapsed().as_secs_f64() < min_warm_up {
        timed(run, wait, batch)?;
    }
    let mut last = timed(run, wait, batch)?;
    for _ in 0..8 {
        let now = timed(run, wait, batch)?;
        let stable = (now - last).abs() <= 0.03 * last;
        last = now;
        if stable {
            break;
        }
    }
    let mut samples: Vec<f64> = (0..if quick { 3 } else { 7 })
        .map(|_| timed(run, wait, batch))
        .collect::<Result<_, _>>()?;
    samples.sort_by(f64::total_cmp);
    Ok(samples[samples.len() / 2])
}

/// [`time_launch`] of a case: device timers when the backend has them and the case runs on
/// the client, else host time around the case's own sync.
pub(crate) fn time_case<R: Runtime>(
    client: &ComputeClient<R>,
    quick: bool,
    clock: Clock,
    case: &mut Case<'_>,
) -> Result<f64, Error> {
    let (run, own_sync) = case.split();
    match own_sync {
        // A vendor library on its own stream: host time around that stream's sync.
        Some(wait) => time_launch(client, quick, Clock::Host, run, wait),
        None => time_launch(client, quick, clock, run, &mut || sync(client)),
    }
}
