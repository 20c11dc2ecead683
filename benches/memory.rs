//! Criterion benchmarks of the data-movement families — transpose and histograms — next to the
//! device copy of the same bytes, measured in the same process. The cases come from
//! [`cubeport_cli::cases`] (shared with `cubeport bench`); each was checked against the CPU
//! reference when it was built.
//!
//! ```text
//! cargo bench --bench memory
//! CUBEPORT_BACKEND=cuda cargo bench --bench memory -- 'histogram/'
//! CUBEPORT_BENCH_QUICK=1 cargo bench --bench memory     # small sizes (lavapipe)
//! ```
//! Ids: `<family>/<variant>/<backend>/<dtype>` with the size as the parameter. Throughput:
//! transpose and copy count bytes read + written; histograms count the input read once.

use criterion::{Criterion, criterion_group, criterion_main};
use cubeport::BackendKind;
use cubeport::cubecl::prelude::*;

mod common;
use common::{Count, bench_cases};

struct Visit<'a>(&'a mut Criterion);

impl cubeport::testing::BackendVisitor for Visit<'_> {
    fn visit<R: Runtime>(&mut self, client: ComputeClient<R>, kind: BackendKind) {
        let scale = common::scale();
        // CUBEPORT_BENCH_FAMILIES=transpose,histogram (default both) skips the setup of the
        // others. Built one family at a time so only one family's buffers are alive.
        let families = std::env::var("CUBEPORT_BENCH_FAMILIES")
            .unwrap_or_else(|_| "transpose,histogram".into());
        if families.split(',').any(|f| f == "transpose") {
            let cases = cubeport_cli::cases::transpose_cases(&client, scale)
                .unwrap_or_else(|e| panic!("transpose cases on {kind}: {e}"));
            bench_cases(self.0, &client, kind, Count::Bytes, cases);
        }
        if families.split(',').any(|f| f == "histogram") {
            // CUBEPORT_HIST_BATCH=<n>: the histogram kernel loading n vectors per unit and
            // step instead of its built-in batch (each backend's best batch is measured so).
            if let Some(b) = std::env::var("CUBEPORT_HIST_BATCH")
                .ok()
                .and_then(|v| v.parse().ok())
            {
                cubeport::testing::set_histogram_batch(b);
            }
            let cases = cubeport_cli::cases::histogram_cases(&client, scale)
                .unwrap_or_else(|e| panic!("histogram cases on {kind}: {e}"));
            bench_cases(self.0, &client, kind, Count::Bytes, cases);
        }
    }
}

fn benches(c: &mut Criterion) {
    cubeport::testing::visit_backends("bench memory", None, &mut Visit(c));
}

criterion_group!(memory, benches);
criterion_main!(memory);
