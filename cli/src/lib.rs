//! Tooling around [`cubeport`], kept out of the library so that a framework depending on
//! `cubeport` pulls no CLI, plotting, JSON or cuBLAS crates: the benchmark [`cases`] that the
//! `cubeport` binary (`check`, `devices`, `bench`) and the criterion benches time.
#![deny(missing_docs)]

pub mod cases;
