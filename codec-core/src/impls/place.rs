//! A `Vec`'s elements decoded straight into its spare capacity
//! (`Decode::decode_to`), not built elsewhere and moved in.

use std::ptr;

use super::collections::Take;
use crate::codec::Decode;
use crate::error::DecodeError;
use crate::msgpack::read::Reader;

impl<T> Take<T> for Vec<T> {
    #[inline(always)]
    fn take<'de>(&mut self, r: &mut Reader<'de>) -> Result<(), DecodeError>
    where
        T: Decode<'de>,
    {
        if size_of::<T>() == 0 {
            // Every zero-sized value is at the same address: the comparison
            // below would prove nothing.
            let mut slot = None;
            T::decode_in_place(r, &mut slot)?;
            return match slot {
                Some(v) => {
                    self.push(v);
                    Ok(())
                }
                None => Err(r.no_value()),
            };
        }
        if self.len() == self.capacity() {
            self.reserve(1);
        }
        let slot = &mut self.spare_capacity_mut()[0];
        let at = slot.as_ptr();
        let value = T::decode_to(r, slot)?;
        if !ptr::eq(value, at) {
            // A `decode_to` that returned a value other than its slot: the
            // slot may be uninitialized, so it is not taken.
            return Err(r.no_value());
        }
        // SAFETY: `value` is a `&mut T`, which safe code can only hold to
        // an initialized `T`, and it points to `at` (`T` is not zero-sized,
        // so no other value shares that address): the first element of
        // the spare capacity, at index `len`, below the capacity. So the
        // first `len + 1` elements are initialized.
        unsafe { self.set_len(self.len() + 1) };
        Ok(())
    }

    #[inline(always)]
    fn add(&mut self, value: T) {
        self.push(value);
    }
}
