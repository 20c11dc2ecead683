//! The device side of piecewise uploads: a host buffer travels in pieces small enough to stay
//! in the CPU's caches through the runtime's host copies, and each piece is placed into the
//! whole buffer on the device.

use cubecl::prelude::*;

/// `dst[dst_at + i] = src[i]` for `i < count`, in vectors of `NV` 32-bit words (offset and count
/// in vectors). 1-D grid-stride, so any grid covers it.
#[cube(launch_unchecked)]
pub fn copy_words_kernel<NV: Size>(
    src: &Array<Vector<u32, NV>>,
    dst: &mut Array<Vector<u32, NV>>,
    dst_at: usize,
    count: usize,
) {
    let step = CUBE_COUNT * CUBE_DIM as usize;
    let mut i = ABSOLUTE_POS;
    while i < count {
        dst[dst_at + i] = src[i];
        i += step;
    }
}
