use crate::{DType, Error, Layout, PinnedBuffer, Scalar, ShapeError};
use cubecl::prelude::*;
use cubecl::server::Handle;
use std::marker::PhantomData;

/// A read-only view of a device tensor owned elsewhere (a framework's handle): the handle plus
/// shape, strides (in elements) and dtype. Creating one copies nothing.
///
/// ```no_run
/// # use cubeport::{TensorRef, DType};
/// # fn f(handle: &cubeport::cubecl::server::Handle) {
/// let x = TensorRef::new(handle, &[4, 1024], &[1024, 1], DType::F32);
/// # }
/// ```
#[derive(Debug, Clone)]
pub struct TensorRef<'a> {
    pub(crate) handle: &'a Handle,
    pub(crate) layout: Layout,
}

/// A writable view of a device tensor owned elsewhere. Same fields as [`TensorRef`]; the
/// distinct type documents which argument an op writes.
#[derive(Debug, Clone)]
pub struct TensorMut<'a> {
    pub(crate) handle: &'a Handle,
    pub(crate) layout: Layout,
}

macro_rules! view_impl {
    ($t:ident) => {
        impl<'a> $t<'a> {
            /// Wraps `handle` with the given shape, strides (elements) and dtype. Nothing is
            /// checked here; ops validate when called.
            pub fn new(
                handle: &'a Handle,
                shape: &[usize],
                strides: &[usize],
                dtype: DType,
            ) -> Self {
                let layout = Layout {
                    shape: shape.to_vec(),
                    strides: strides.to_vec(),
                    dtype,
                    buffer_bytes: handle.size_in_used(),
                };
                Self { handle, layout }
            }

            /// Wraps `handle` as a dense row-major tensor of `shape`.
            pub fn contiguous(handle: &'a Handle, shape: &[usize], dtype: DType) -> Self {
                Self::new(handle, shape, &Layout::contiguous_strides(shape), dtype)
            }

            /// The layout ops validate.
            pub fn layout(&self) -> &Layout {
                &self.layout
            }

            /// The device handle.
            pub fn handle(&self) -> &'a Handle {
                self.handle
            }
        }
    };
}
view_impl!(TensorRef);
view_impl!(TensorMut);

/// A small owned, dense, row-major device tensor of `E`, for standalone use.
#[derive(Debug, Clone)]
pub struct DeviceTensor<E: Scalar> {
    handle: Handle,
    shape: Vec<usize>,
    _elem: PhantomData<E>,
}

impl<E: Scalar> DeviceTensor<E> {
    /// Uploads `data` (row-major) as a tensor of `shape`.
    ///
    /// # Errors
    /// [`ShapeError::DataLength`] if `data.len()` is not the product of `shape`;
    /// [`Error::Allocation`] beyond the device's largest single allocation (cubecl would panic
    /// on its device thread and hand back a dangling buffer).
    pub fn from_slice<R: Runtime>(
        client: &ComputeClient<R>,
        data: &[E],
        shape: &[usize],
    ) -> Result<Self, Error> {
        let elems: usize = shape.iter().product();
        if data.len() != elems {
            return Err(Error::Shape {
                op: "DeviceTensor::from_slice",
                source: ShapeError::DataLength {
                    name: "data",
                    got: data.len(),
                    shape: shape.to_vec(),
                },
            });
        }
        Self::upload_with(client, data, shape, crate::transfer::upload)
    }

    /// A tensor of `shape` holding `data` (its length already checked against `shape`), moved
    /// to the device by `upload`.
    fn upload_with<R: Runtime>(
        client: &ComputeClient<R>,
        data: &[E],
        shape: &[usize],
        upload: fn(&ComputeClient<R>, &[u8]) -> Result<Handle, Error>,
    ) -> Result<Self, Error> {
        check_alloc(client, std::mem::size_of_val(data))?;
        let handle = if data.is_empty() {
            client.empty(E::DTYPE.size()) // cubecl wants a non-empty buffer
        } else {
            upload(client, bytemuck::cast_slice(data))?
        };
        Ok(Self {
            handle,
            shape: shape.to_vec(),
            _elem: PhantomData,
        })
    }

    /// Uploads the first `shape.iter().product()` elements of a [`PinnedBuffer`]: a direct DMA
    /// on CUDA (no host copy), as [`DeviceTensor::from_slice`] elsewhere.
    ///
    /// # Errors
    /// As [`DeviceTensor::from_slice`], with `data` allowed to be longer than `shape` needs;
    /// [`Error::Transfer`] when the driver fails the copy.
    pub fn from_pinned<R: Runtime>(
        client: &ComputeClient<R>,
        data: &PinnedBuffer<E>,
        shape: &[usize],
    ) -> Result<Self, Error> {
        let elems: usize = shape.iter().product();
        let data: &[E] = data;
        let data = data.get(..elems).ok_or_else(|| Error::Shape {
            op: "DeviceTensor::from_pinned",
            source: ShapeError::DataLength {
                name: "data",
                got: data.len(),
                shape: shape.to_vec(),
            },
        })?;
        Self::upload_with(client, data, shape, crate::transfer::upload_pinned)
    }

    /// Downloads the tensor into the start of `dst` (direct on CUDA: no host copy).
    ///
    /// # Errors
    /// [`ShapeError::DataLength`] when `dst` is shorter than the tensor; [`Error::Read`] /
    /// [`Error::Transfer`] when the runtime fails the read.
    pub fn read_into<R: Runtime>(
        &self,
        client: &ComputeClient<R>,
        dst: &mut PinnedBuffer<E>,
    ) -> Result<(), Error> {
        let elems = self.len();
        let got = dst.len();
        let dst: &mut [E] = dst;
        let dst = dst.get_mut(..elems).ok_or_else(|| Error::Shape {
            op: "DeviceTensor::read_into",
            source: ShapeError::DataLength {
                name: "dst",
                got,
                shape: self.shape.clone(),
            },
        })?;
        if dst.is_empty() {
            return Ok(());
        }
        crate::transfer::download(client, &self.handle, bytemuck::cast_slice_mut(dst))
    }

    /// An uninitialised tensor of `shape` (contents unspecified until an op writes it).
    ///
    /// # Errors
    /// [`Error::Allocation`] beyond the device's largest single allocation.
    pub fn empty<R: Runtime>(client: &ComputeClient<R>, shape: &[usize]) -> Result<Self, Error> {
        let elems: usize = shape.iter().product();
        check_alloc(client, elems * E::DTYPE.size())?;
        let handle = client.empty((elems * E::DTYPE.size()).max(E::DTYPE.size()));
        Ok(Self {
            handle,
            shape: shape.to_vec(),
            _elem: PhantomData,
        })
    }

    /// Downloads the tensor (waits for pending work on it).
    ///
    /// # Errors
    /// [`Error::Read`] when the runtime fails the read (an earlier failed launch, a lost device).
    pub fn to_vec<R: Runtime>(&self, client: &ComputeClient<R>) -> Result<Vec<E>, Error> {
        crate::transfer::download_vec(client, &self.handle, self.len())
    }

    /// Shape.
    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    /// Number of elements.
    pub fn len(&self) -> usize {
        self.shape.iter().product()
    }

    /// Whether the tensor has no elements.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The device handle (for use with cubecl or another framework).
    pub fn handle(&self) -> &Handle {
        &self.handle
    }

    /// A read-only view for the `*_into` ops.
    pub fn as_ref(&self) -> TensorRef<'_> {
        TensorRef::contiguous(&self.handle, &self.shape, E::DTYPE)
    }

    /// A writable view for the `*_into` ops.
    pub fn as_mut(&mut self) -> TensorMut<'_> {
        TensorMut::contiguous(&self.handle, &self.shape, E::DTYPE)
    }
}

/// Refuses allocations cubecl cannot make: it panics on its device thread (swallowed) and
/// returns a dangling handle instead of an error.
fn check_alloc<R: Runtime>(client: &ComputeClient<R>, bytes: usize) -> Result<(), Error> {
    let limit = client.properties().memory.max_page_size;
    if bytes as u64 > limit {
        return Err(Error::Allocation {
            bytes: bytes as u64,
            limit,
        });
    }
    Ok(())
}
