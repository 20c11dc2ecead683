//! Tile shapes of the vectorized CUDA-core kernels
//! ([`MatmulVariant::Simt`](super::MatmulVariant::Simt)): ids, presets and the device checks.

use crate::{Caps, DType};
use cubeport_kernels::matmul::SimtConfig;
use std::fmt;

/// Tile shape of the vectorized CUDA-core kernel
/// ([`MatmulVariant::Simt`](super::MatmulVariant::Simt)): a cube computes a `bm × bn` block
/// through `bk`-deep shared tiles, each unit a `tm × tn` register tile (in 4 × 4 groups), with 1
/// or 2 shared stages. Written `simt<bm>x<bn>x<bk>_<tm>x<tn>_s<stages>`, which
/// [`str::parse`] reads back.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SimtShape {
    /// Block rows.
    pub bm: u16,
    /// Block columns.
    pub bn: u16,
    /// Shared tile depth.
    pub bk: u16,
    /// Rows per unit (a multiple of 4).
    pub tm: u16,
    /// Columns per unit (a multiple of 4).
    pub tn: u16,
    /// Shared stages: 1 or 2 through registers, or 2–4 `cp.async` stages with `async_copy`.
    pub stages: u16,
    /// Tiles copied global → shared by `cp.async` (f32, CUDA sm ≥ 80) into `stages` stages on
    /// mbarriers, A kept row-major: no register staging. Written `_a<stages>` for `_s<stages>`.
    /// Operands whose rows are not 16-byte vectors are copied into padded buffers first.
    pub async_copy: bool,
    /// Cubes walk the output in column strips `group` block-rows tall (0 or 1: row by row, the
    /// launch order), as [`TcShape::group`](super::TcShape::group). Written `_g<group>` after
    /// the stages.
    pub group: u16,
    /// Stream-K tail (register-staged shapes): `Some(p)` runs all but the last
    /// `blocks mod p` blocks whole and shares those last blocks' depth tiles evenly among `p`
    /// cubes, whose pieces a second pass sums (in a fixed order) before the epilogue, so a
    /// grid of one cube per SM ends in a full wave instead of a partial one. `Some(0)`: `p` is
    /// the device's SM count (an error where the device does not report one). The tail's
    /// pieces take an f32 workspace of at most `2p · bm · bn` entries. Written `_sk` or
    /// `_sk<p>` (`p ≥ 2`) last.
    pub stream_k: Option<u16>,
}

impl SimtShape {
    /// 128 × 256 blocks, 8-deep tiles, 8 × 16 per unit (256 units), one stage, cubes in the
    /// launch order.
    pub const S128X256: SimtShape = SimtShape::new(128, 256, 8, 8, 16, 1);
    /// [`SimtShape::S128X256`] with cubes walking column strips 8 block-rows tall (the
    /// resident cubes share more A and B tiles in L2): the choice for large f32 products where
    /// the device reports no SM count.
    pub const S128X256_G8: SimtShape = SimtShape::S128X256.with_group(8);
    /// [`SimtShape::S128X256_G8`] with a stream-K tail over the device's SMs (no partial last
    /// wave): the choice for large f32 products where the device reports its SM count.
    pub const S128X256_G8_SK: SimtShape = SimtShape::S128X256_G8.with_stream_k(0);
    /// 128 × 256 blocks, 16-deep tiles, 8 × 16 per unit, three `cp.async` stages (f32 with
    /// 16-byte rows on CUDA; forced only until it has been timed on a GPU).
    pub const S128X256_A3: SimtShape = SimtShape::new(128, 256, 16, 8, 16, 3).with_async(3);
    /// 128 × 128 blocks, 16-deep tiles, 8 × 16 per unit (128 units), one stage: outputs too
    /// small to fill the device with 128 × 256 blocks.
    pub const S128_WIDE: SimtShape = SimtShape::new(128, 128, 16, 8, 16, 1);
    /// 128 × 128 blocks, 8-deep tiles, 8 × 8 per unit (256 units), double-buffered.
    pub const S128: SimtShape = SimtShape::new(128, 128, 8, 8, 8, 2);
    /// The same, one shared stage (two barriers per tile, half the shared memory).
    pub const S128_SINGLE: SimtShape = SimtShape::new(128, 128, 8, 8, 8, 1);
    /// 64 × 64 blocks, 16-deep tiles, 4 × 4 per unit (256 units): mid-sized outputs.
    pub const S64: SimtShape = SimtShape::new(64, 64, 16, 4, 4, 2);
    /// 32 × 128 blocks, 16-deep tiles, 4 × 8 per unit (128 units), double-buffered: with a
    /// stream-K tail of two cubes per SM, the choice for 17–32 rows on CUDA cores.
    pub const S32X128: SimtShape = SimtShape::new(32, 128, 16, 4, 8, 2);
    /// 64 × 128 blocks, 16-deep tiles, 4 × 8 per unit (256 units), double-buffered: with a
    /// stream-K tail of two cubes per SM, the choice for 33–64 rows on CUDA cores.
    pub const S64X128: SimtShape = SimtShape::new(64, 128, 16, 4, 8, 2);

    /// A shape; [`SimtShape::check`] says whether a device can run it.
    pub const fn new(bm: u16, bn: u16, bk: u16, tm: u16, tn: u16, stages: u16) -> Self {
        SimtShape {
            bm,
            bn,
            bk,
            tm,
            tn,
            stages,
            async_copy: false,
            group: 0,
            stream_k: None,
        }
    }

    /// The same tiles with cubes grouped into strips of `group` block-rows.
    pub const fn with_group(self, group: u16) -> Self {
        SimtShape { group, ..self }
    }

    /// The same tiles with a stream-K tail shared among `cubes` cubes (0: the device's SMs;
    /// see [`SimtShape::stream_k`]).
    pub const fn with_stream_k(self, cubes: u16) -> Self {
        SimtShape {
            stream_k: Some(cubes),
            ..self
        }
    }

    /// The same tiles through a `cp.async` pipeline of `stages` stages.
    pub const fn with_async(self, stages: u16) -> Self {
        SimtShape {
            stages,
            async_copy: true,
            ..self
        }
    }

    pub(super) fn units(&self) -> usize {
        (self.bm / self.tm.max(1)) as usize * (self.bn / self.tn.max(1)) as usize
    }

    /// Shared memory one cube of this shape takes for `dtype`, bytes.
    pub fn shared_bytes(&self, dtype: DType) -> usize {
        let (bm, bn, bk, st) = (
            self.bm as usize,
            self.bn as usize,
            self.bk as usize,
            self.stages as usize,
        );
        if self.async_copy {
            // A row-major with one 4-wide vector of padding per row.
            st * (bm * (bk + 4) + bk * bn) * dtype.size()
        } else {
            st * bk * (bm + 4 * SIMT_PAD + bn) * dtype.size()
        }
    }

    /// Why this shape cannot run on `caps` (the kernel's preconditions), if it cannot.
    pub fn check(&self, caps: &Caps, dtype: DType) -> Result<(), String> {
        let SimtShape {
            bm,
            bn,
            bk,
            tm,
            tn,
            stages,
            async_copy,
            group: _,
            stream_k,
        } = *self;
        if let Some(p) = stream_k {
            if async_copy {
                return Err(format!(
                    "{self}: stream-K runs the register-staged kernel, not the cp.async one"
                ));
            }
            if p == 1 {
                return Err(format!("{self}: a stream-K tail needs at least 2 cubes"));
            }
            if p == 0 && caps.num_sms.is_none() {
                return Err(format!(
                    "{self}: the device reports no SM count to size the stream-K tail by \
                     (force `_sk<cubes>`)"
                ));
            }
        }
        if async_copy {
            if dtype != DType::F32 {
                return Err(format!("{self}: the cp.async SIMT kernel takes f32 inputs"));
            }
            if !(2..=4).contains(&stages) || bk % 4 != 0 {
                return Err(format!(
                    "{self}: cp.async stages must be 2, 3 or 4 and bk a multiple of 4"
                ));
            }
            if !caps.copy_async {
                return Err(format!(
                    "{self}: the device has no asynchronous global-to-shared copies (cp.async)"
                ));
            }
        } else if !(1..=2).contains(&stages) {
            return Err(format!("{self}: stages must be 1 or 2"));
        }
        if tm == 0 || tn == 0 || tm % 4 != 0 || tn % 4 != 0 {
            return Err(format!("{self}: tm and tn must be positive multiples of 4"));
        }
        if bm == 0 || bn == 0 || bk == 0 || bm % tm != 0 || bn % tn != 0 {
            return Err(format!(
                "{self}: bm, bn, bk must be positive, bm a multiple of tm, bn of tn"
            ));
        }
        let units = self.units();
        let (a_slots, b_slots) = (bk as usize * bm as usize / 4, bk as usize * bn as usize / 4);
        if a_slots % units != 0 || b_slots % units != 0 {
            return Err(format!(
                "{self}: the {units} units must divide the {a_slots} A and {b_slots} B vectors of a tile"
            ));
        }
        if units > caps.max_units_per_cube as usize || units as u32 > caps.max_cube_dim[0] {
            return Err(format!(
                "{self}: {units} units exceed the device's cube size"
            ));
        }
        let shared = self.shared_bytes(dtype);
        if shared > caps.max_shared_bytes {
            return Err(format!(
                "{self}: {shared} bytes of shared memory exceed the device's {}",
                caps.max_shared_bytes
            ));
        }
        Ok(())
    }

    pub(super) fn config(&self, bias: bool, b_vec: bool, c_vec: bool) -> SimtConfig {
        SimtConfig {
            bm: self.bm as usize,
            bn: self.bn as usize,
            bk: self.bk as usize,
            tm: self.tm as usize,
            tn: self.tn as usize,
            pad: SIMT_PAD,
            stages: self.stages as usize,
            group: self.group.max(1) as usize,
            bias,
            b_vec,
            c_vec,
            linear: false,
        }
    }
}

/// Padding vectors per row of the transposed A tile of the SIMT kernel.
const SIMT_PAD: usize = 1;

impl fmt::Display for SimtShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let SimtShape {
            bm,
            bn,
            bk,
            tm,
            tn,
            stages,
            async_copy,
            group,
            stream_k,
        } = self;
        let kind = if *async_copy { 'a' } else { 's' };
        write!(f, "simt{bm}x{bn}x{bk}_{tm}x{tn}_{kind}{stages}")?;
        if *group > 1 {
            write!(f, "_g{group}")?;
        }
        match stream_k {
            None => {}
            Some(0) => f.write_str("_sk")?,
            Some(p) => write!(f, "_sk{p}")?,
        }
        Ok(())
    }
}

impl std::str::FromStr for SimtShape {
    type Err = String;

    /// Parses `simt<bm>x<bn>x<bk>_<tm>x<tn>_{s|a}<stages>[_g<group>][_sk[<cubes>]]` (as
    /// printed).
    fn from_str(s: &str) -> Result<Self, String> {
        let bad = || {
            format!(
                "`{s}` is not simt<bm>x<bn>x<bk>_<tm>x<tn>_{{s|a}}<stages>[_g<group>][_sk[<cubes>]]"
            )
        };
        let rest = s.strip_prefix("simt").ok_or_else(bad)?;
        let mut parts = rest.split('_').peekable();
        let (block, unit, stages) = (
            parts.next().ok_or_else(bad)?,
            parts.next().ok_or_else(bad)?,
            parts.next().ok_or_else(bad)?,
        );
        let group = match parts.next_if(|g| g.starts_with('g')) {
            None => 0,
            Some(g) => match g[1..].parse::<u16>() {
                Ok(g) if g > 1 => g,
                _ => return Err(bad()),
            },
        };
        let stream_k = match parts.next() {
            None => None,
            Some("sk") => Some(0),
            Some(p) => match p.strip_prefix("sk").map(str::parse::<u16>) {
                Some(Ok(p)) if p > 1 => Some(p),
                _ => return Err(bad()),
            },
        };
        if parts.next().is_some() {
            return Err(bad());
        }
        let nums = |t: &str, count: usize| -> Result<Vec<u16>, String> {
            let v: Vec<u16> = t
                .split('x')
                .map(|x| x.parse::<u16>().map_err(|_| bad()))
                .collect::<Result<_, _>>()?;
            if v.len() == count { Ok(v) } else { Err(bad()) }
        };
        let b = nums(block, 3)?;
        let u = nums(unit, 2)?;
        let (async_copy, st) = match stages.split_at_checked(1) {
            Some(("s", x)) => (false, x),
            Some(("a", x)) => (true, x),
            _ => return Err(bad()),
        };
        let st = st.parse::<u16>().map_err(|_| bad())?;
        let mut shape = SimtShape::new(b[0], b[1], b[2], u[0], u[1], st).with_group(group);
        shape.stream_k = stream_k;
        Ok(if async_copy {
            shape.with_async(st)
        } else {
            shape
        })
    }
}
