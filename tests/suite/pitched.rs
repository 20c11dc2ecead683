//! Tensors with padded rows (a row pitch larger than the row, as Burn's CUDA backend allocates
//! `[67, 1003]` f32 with strides `[1024, 1]`): activation, softmax and matmul read and write
//! them in place; the padding is never written; a pitch smaller than the row is refused.

use cubeport::cubecl::prelude::*;
use cubeport::reference::{self, Tolerance};
use cubeport::testing::{compare, compare_each, poison, seeded, to_f64};
use cubeport::{
    Activation, DType, DeviceTensor, Error, GeluApprox, ShapeError, TensorMut, TensorRef,
};

/// `rows × cols` values stored at `pitch`, padding poisoned.
fn padded(values: &[f32], rows: usize, cols: usize, pitch: usize) -> Vec<f32> {
    let mut buf = vec![poison::<f32>(); (rows - 1) * pitch + cols + 3];
    for r in 0..rows {
        buf[r * pitch..r * pitch + cols].copy_from_slice(&values[r * cols..(r + 1) * cols]);
    }
    buf
}

fn unpad(buf: &[f32], rows: usize, cols: usize, pitch: usize) -> (Vec<f64>, bool) {
    let mut vals = Vec::with_capacity(rows * cols);
    let mut pad_ok = true;
    for (i, &v) in buf.iter().enumerate() {
        let (r, c) = (i / pitch, i % pitch);
        if r < rows && c < cols {
            vals.push(v as f64);
        } else {
            pad_ok &= v == poison::<f32>();
        }
    }
    (vals, pad_ok)
}

pub fn padded_rows<R: Runtime>(client: &ComputeClient<R>) {
    for (rows, cols, pin, pout) in [(67, 1003, 1024, 1008), (5, 7, 9, 7), (3, 64, 64, 72)] {
        let x: Vec<f32> = seeded((rows * cols) as u64, rows * cols, -3.0, 3.0);
        let b: Vec<f32> = seeded(cols as u64, cols, -1.0, 1.0);
        let dx = DeviceTensor::from_slice(
            client,
            &padded(&x, rows, cols, pin),
            &[(rows - 1) * pin + cols + 3],
        )
        .unwrap();
        let db = DeviceTensor::from_slice(client, &b, &[cols]).unwrap();
        let xin = TensorRef::new(dx.handle(), &[rows, cols], &[pin, 1], DType::F32);
        let fresh = || {
            DeviceTensor::from_slice(
                client,
                &vec![poison::<f32>(); (rows - 1) * pout + cols + 3],
                &[(rows - 1) * pout + cols + 3],
            )
            .unwrap()
        };
        let what = format!("{rows}x{cols} pitches {pin}/{pout} on {}", R::name(client));

        // bias + GELU with a broadcast bias row.
        let dy = fresh();
        let act = Activation::Gelu(GeluApprox::Erf);
        cubeport::bias_activation_into(
            client,
            xin.clone(),
            db.as_ref(),
            TensorMut::new(dy.handle(), &[rows, cols], &[pout, 1], DType::F32),
            act,
        )
        .unwrap();
        let (got, pad_ok) = unpad(&dy.to_vec(client).unwrap(), rows, cols, pout);
        let want = reference::bias_activation(&to_f64(&x), &to_f64(&b), act);
        let c = compare(&got, &want, Tolerance::elementwise(DType::F32));
        assert!(
            c.ok() && pad_ok,
            "bias_gelu {what}: {c}, padding intact: {pad_ok}"
        );

        // Full-shape bias with its own pitch (the input's).
        let dy = fresh();
        cubeport::bias_activation_into(
            client,
            xin.clone(),
            xin.clone(),
            TensorMut::new(dy.handle(), &[rows, cols], &[pout, 1], DType::F32),
            Activation::Identity,
        )
        .unwrap();
        let (got, pad_ok) = unpad(&dy.to_vec(client).unwrap(), rows, cols, pout);
        let want: Vec<f64> = x.iter().map(|&v| 2.0 * v as f64).collect();
        let c = compare(&got, &want, Tolerance::elementwise(DType::F32));
        assert!(
            c.ok() && pad_ok,
            "x + x {what}: {c}, padding intact: {pad_ok}"
        );

        // Softmax.
        let dy = fresh();
        cubeport::softmax_into(
            client,
            xin.clone(),
            TensorMut::new(dy.handle(), &[rows, cols], &[pout, 1], DType::F32),
            1,
        )
        .unwrap();
        let (got, pad_ok) = unpad(&dy.to_vec(client).unwrap(), rows, cols, pout);
        let want = reference::softmax(&to_f64(&x), cols);
        let c = compare(&got, &want, Tolerance::softmax(DType::F32, cols));
        assert!(
            c.ok() && pad_ok,
            "softmax {what}: {c}, padding intact: {pad_ok}"
        );

        // Matmul: A is the padded x ([rows, cols]), B dense [cols, 5], C padded.
        let n = 5;
        let bm: Vec<f32> = seeded(11, cols * n, -1.0, 1.0);
        let dbm = DeviceTensor::from_slice(client, &bm, &[cols, n]).unwrap();
        let cp = n + 3;
        let dc = DeviceTensor::from_slice(
            client,
            &vec![poison::<f32>(); (rows - 1) * cp + n + 3],
            &[(rows - 1) * cp + n + 3],
        )
        .unwrap();
        cubeport::matmul_into(
            client,
            xin.clone(),
            dbm.as_ref(),
            TensorMut::new(dc.handle(), &[rows, n], &[cp, 1], DType::F32),
        )
        .unwrap();
        let (got, pad_ok) = unpad(&dc.to_vec(client).unwrap(), rows, n, cp);
        let xf = to_f64(&x);
        let want = reference::matmul(&xf, &to_f64(&bm), 1, 1, rows, n, cols);
        let abs: Vec<f64> = xf.iter().map(|v| v.abs()).collect();
        let sum_abs = reference::matmul(
            &abs,
            &to_f64(&bm).iter().map(|v| v.abs()).collect::<Vec<_>>(),
            1,
            1,
            rows,
            n,
            cols,
        );
        let c = compare_each(&got, &want, |i| {
            Tolerance::matmul(DType::F32, cols, sum_abs[i])
        });
        assert!(
            c.ok() && pad_ok,
            "matmul {what}: {c}, padding intact: {pad_ok}"
        );
    }

    // A pitch shorter than the row overlaps rows: refused.
    let d = DeviceTensor::from_slice(client, &[1.0f32; 64], &[64]).unwrap();
    let bad = TensorRef::new(d.handle(), &[4, 8], &[6, 1], DType::F32);
    let out = DeviceTensor::<f32>::empty(client, &[4, 8]).unwrap();
    let r = cubeport::softmax_into(
        client,
        bad.clone(),
        TensorMut::contiguous(out.handle(), &[4, 8], DType::F32),
        1,
    );
    assert!(
        matches!(
            r,
            Err(Error::Shape {
                source: ShapeError::NotContiguous { .. },
                ..
            })
        ),
        "{r:?}"
    );
    let r = cubeport::bias_activation_into(
        client,
        bad,
        TensorRef::contiguous(d.handle(), &[8], DType::F32),
        TensorMut::contiguous(out.handle(), &[4, 8], DType::F32),
        Activation::Identity,
    );
    assert!(
        matches!(
            r,
            Err(Error::Shape {
                source: ShapeError::NotContiguous { .. },
                ..
            })
        ),
        "{r:?}"
    );
}
