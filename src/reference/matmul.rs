//! The reference for matmul.

/// `C[z] = A[z]·B[z]` for dense row-major `A: [batch_a, m, k]`, `B: [batch_b, k, n]` where a
/// batch of 1 broadcasts; `C: [max(batch_a, batch_b), m, n]` (empty on inconsistent sizes).
pub fn matmul(
    a: &[f64],
    b: &[f64],
    batch_a: usize,
    batch_b: usize,
    m: usize,
    n: usize,
    k: usize,
) -> Vec<f64> {
    let batch = batch_a.max(batch_b);
    let ok_batch = |x: usize| x == batch || x == 1;
    if a.len() != batch_a * m * k
        || b.len() != batch_b * k * n
        || !ok_batch(batch_a)
        || !ok_batch(batch_b)
    {
        return Vec::new();
    }
    let mut c = vec![0.0; batch * m * n];
    for z in 0..batch {
        let ao = if batch_a == 1 { 0 } else { z * m * k };
        let bo = if batch_b == 1 { 0 } else { z * k * n };
        for i in 0..m {
            for p in 0..k {
                let av = a[ao + i * k + p];
                let row = &b[bo + p * n..bo + (p + 1) * n];
                let out = &mut c[(z * m + i) * n..(z * m + i + 1) * n];
                for (o, bv) in out.iter_mut().zip(row) {
                    *o += av * bv;
                }
            }
        }
    }
    c
}
