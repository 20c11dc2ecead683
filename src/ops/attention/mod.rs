//! Attention forward (FlashAttention-2's algorithm): `softmax(scale · Q·Kᵀ + mask) · V` with
//! K/V streamed in tiles and an online softmax, the score matrix never stored.
//!
//! | variant | kernel | backends |
//! |---|---|---|
//! | `simt_plane` / `simt_shared` | tiles of 32 keys staged in shared memory (f32); one unit per key and query row scores, the row's group takes the tile's max and `Σ exp` (plane shuffles or a shared tree), each unit rescales and accumulates its share of the output dims; 8 rows per cube; head dims ≤ 128 | every backend (`simt_plane`: plane width dividing 32) |
//!
//! Shapes: `q` `[B, H, Sq, D]`, `k` and `v` `[B, Hkv, Sk, D]` with `Hkv` dividing `H`
//! (grouped-query and multi-query attention), `out` like `q`; any strides with a unit stride
//! along `D`, so `[B, S, H, D]` memory viewed as `[B, H, S, D]` needs no copy. f32, f16 and
//! bf16 storage; scores, softmax and accumulation in f32. The causal mask is aligned to the
//! bottom-right corner ([`Mask::Causal`]).
//!
//! Edge semantics ([`crate::reference::attention`]): a row that sees no key (causal with
//! `Sq > Sk`) gives 0 and `lse = −∞`; a NaN in the query, a visible key or a visible value
//! makes the row NaN.

mod launch;
mod spec;

pub use spec::{AttentionOptions, AttentionVariant, Mask};

use crate::guard::LaunchKey;
use crate::ops::expect_dtype_supported;
use crate::{DeviceTensor, Element, Error, Layout, TensorMut, TensorRef, caps_of};
use cubecl::prelude::*;
use launch::AttentionHandles;
use spec::{AttentionLayouts, AttentionSpec};

/// `out = softmax(scale · q·kᵀ + mask) · v` for every batch and head; with `lse`, also the
/// log-sum-exp `m + ln Σ exp(s − m)` of each row's scaled, masked scores (`[B, H, Sq]`, f32,
/// dense), what a backward pass or a split-KV combine needs.
///
/// Shapes and semantics as the [module docs](self); `opts` picks the mask and the scale
/// (default `1/√D`).
///
/// # Errors
/// [`Error::Shape`]: ranks other than 4, empty q or k, batches or head dims that differ, `Hkv`
/// not dividing `H`, v unlike k, out unlike q, a dtype mismatch, a stride of D other than 1,
/// strides past a buffer, an out whose indices overlap, an lse not `[B, H, Sq]` dense f32, a
/// non-finite scale; [`Error::UnsupportedDType`]; [`Error::Unsupported`] for a head dim beyond
/// what the variant stages (128); [`Error::Launch`].
///
/// # Example
/// ```no_run
/// # use cubeport::{AttentionOptions, DeviceTensor};
/// # fn f<R: cubeport::cubecl::Runtime>(client: &cubeport::cubecl::prelude::ComputeClient<R>) -> Result<(), cubeport::Error> {
/// let (b, h, s, d) = (1, 2, 16, 64);
/// let q = DeviceTensor::from_slice(client, &vec![0.1f32; b * h * s * d], &[b, h, s, d])?;
/// let kv = DeviceTensor::from_slice(client, &vec![0.2f32; b * h * s * d], &[b, h, s, d])?;
/// let mut out = DeviceTensor::<f32>::empty(client, &[b, h, s, d])?;
/// let opts = AttentionOptions::default().causal();
/// cubeport::attention_into(client, q.as_ref(), kv.as_ref(), kv.as_ref(), out.as_mut(), None, opts)?;
/// # Ok(()) }
/// ```
pub fn attention_into<R: Runtime>(
    client: &ComputeClient<R>,
    q: TensorRef<'_>,
    k: TensorRef<'_>,
    v: TensorRef<'_>,
    out: TensorMut<'_>,
    lse: Option<TensorMut<'_>>,
    opts: AttentionOptions,
) -> Result<(), Error> {
    attention_impl(client, q, k, v, out, lse, opts, None)
}

/// [`attention_into`] with a forced variant.
///
/// # Errors
/// As [`attention_into`]; [`Error::Unsupported`] when the device cannot run the variant (it is
/// never replaced by another).
#[allow(clippy::too_many_arguments)]
pub fn attention_with<R: Runtime>(
    client: &ComputeClient<R>,
    q: TensorRef<'_>,
    k: TensorRef<'_>,
    v: TensorRef<'_>,
    out: TensorMut<'_>,
    lse: Option<TensorMut<'_>>,
    opts: AttentionOptions,
    variant: AttentionVariant,
) -> Result<(), Error> {
    attention_impl(client, q, k, v, out, lse, opts, Some(variant))
}

/// The variant [`attention_into`] runs for these operands (for reports).
///
/// # Errors
/// As [`attention_into`]'s validation.
pub fn attention_variant<R: Runtime>(
    client: &ComputeClient<R>,
    q: &TensorRef<'_>,
    k: &TensorRef<'_>,
    opts: AttentionOptions,
) -> Result<AttentionVariant, Error> {
    const OP: &str = "attention";
    let out = Layout::dense_unbounded(&q.layout.shape, q.layout.dtype);
    let layouts = AttentionLayouts {
        q: &q.layout,
        k: &k.layout,
        v: &k.layout,
        out: &out,
        lse: None,
    };
    let spec = AttentionSpec::new(&layouts, opts).map_err(Error::shape(OP))?;
    let caps = caps_of(client);
    expect_dtype_supported(&caps, OP, spec.dtype)?;
    Ok(AttentionVariant::select(&caps, &spec))
}

/// Attention into a new dense `[B, H, Sq, D]` tensor.
///
/// # Errors
/// As [`attention_into`].
pub fn attention<R: Runtime, E: Element>(
    client: &ComputeClient<R>,
    q: &DeviceTensor<E>,
    k: &DeviceTensor<E>,
    v: &DeviceTensor<E>,
    opts: AttentionOptions,
) -> Result<DeviceTensor<E>, Error> {
    let mut out = DeviceTensor::<E>::empty(client, q.shape())?;
    attention_into(
        client,
        q.as_ref(),
        k.as_ref(),
        v.as_ref(),
        out.as_mut(),
        None,
        opts,
    )?;
    Ok(out)
}

#[allow(clippy::too_many_arguments)]
fn attention_impl<R: Runtime>(
    client: &ComputeClient<R>,
    q: TensorRef<'_>,
    k: TensorRef<'_>,
    v: TensorRef<'_>,
    out: TensorMut<'_>,
    lse: Option<TensorMut<'_>>,
    opts: AttentionOptions,
    forced: Option<AttentionVariant>,
) -> Result<(), Error> {
    const OP: &str = "attention";
    let layouts = AttentionLayouts {
        q: &q.layout,
        k: &k.layout,
        v: &v.layout,
        out: &out.layout,
        lse: lse.as_ref().map(|l| &l.layout),
    };
    let spec = AttentionSpec::new(&layouts, opts).map_err(Error::shape(OP))?;
    let caps = caps_of(client);
    expect_dtype_supported(&caps, OP, spec.dtype)?;
    let variant = forced.unwrap_or_else(|| AttentionVariant::select(&caps, &spec));
    let plan = variant.plan(&caps, &spec, OP)?;
    let mut key = LaunchKey::new(OP)
        .layout(&q.layout)
        .layout(&k.layout)
        .layout(&v.layout)
        .layout(&out.layout)
        .with((variant, spec.causal, spec.lse));
    if let Some(l) = &lse {
        key = key.layout(&l.layout);
    }
    let stand_in;
    let lse_handle = match &lse {
        Some(l) => l.handle,
        None => {
            // The kernel binds an lse array either way; without one it never writes it.
            stand_in = client.empty(4);
            &stand_in
        }
    };
    let handles = AttentionHandles {
        q: q.handle,
        k: k.handle,
        v: v.handle,
        out: out.handle,
        lse: lse_handle,
    };
    crate::guard::launch_op(client, OP, key, || {
        launch::attention(client, &caps, &handles, &spec, plan)
    })
}
