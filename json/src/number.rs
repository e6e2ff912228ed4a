//! `JsInt`, and the rules that make JSON numbers compare and hash by value.
//!
//! Contract: an integer is stored as a non-negative `u64` or a negative
//! `i64`, never both ways, so derived `Eq`/`Hash` on `JsInt` are by value.
//! Across integers and floats, equality is exact (no rounding through
//! `f64`): `Int(n) == Float(f)` exactly when `f` is integral and equals `n`
//! as an `i128`. Hashing maps every number to that same canonical form.

use std::cmp::Ordering;
use std::fmt;
use std::hash::{Hash, Hasher};

/// A JSON integer covering the whole `i64` and `u64` range
/// (`-2^63 ..= 2^64 - 1`).
///
/// # Examples
///
/// ```
/// use codecbus_json::JsInt;
///
/// let big = JsInt::from(u64::MAX);
/// assert_eq!(big.as_u64(), Some(u64::MAX));
/// assert_eq!(big.as_i64(), None);
/// assert_eq!(JsInt::from(-5i8).as_i64(), Some(-5));
/// assert!(JsInt::from(3u8) < JsInt::from(4i64));
/// ```
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
pub struct JsInt(Repr);

#[derive(Clone, Copy, PartialEq, Eq, Hash)]
enum Repr {
    // Invariant: `Neg` only holds values below zero.
    Pos(u64),
    Neg(i64),
}

impl JsInt {
    /// The smallest value, `i64::MIN`.
    pub const MIN: JsInt = JsInt(Repr::Neg(i64::MIN));
    /// The largest value, `u64::MAX`.
    pub const MAX: JsInt = JsInt(Repr::Pos(u64::MAX));

    /// The value as an `i64`, if it fits.
    pub fn as_i64(self) -> Option<i64> {
        match self.0 {
            Repr::Pos(u) => i64::try_from(u).ok(),
            Repr::Neg(i) => Some(i),
        }
    }

    /// The value as a `u64`, if it is not negative.
    pub fn as_u64(self) -> Option<u64> {
        match self.0 {
            Repr::Pos(u) => Some(u),
            Repr::Neg(_) => None,
        }
    }

    /// The value as an `i128` (always exact).
    pub fn as_i128(self) -> i128 {
        match self.0 {
            Repr::Pos(u) => u as i128,
            Repr::Neg(i) => i as i128,
        }
    }

    /// The nearest `f64`; values beyond 2^53 in magnitude may round.
    pub fn as_f64(self) -> f64 {
        match self.0 {
            Repr::Pos(u) => u as f64,
            Repr::Neg(i) => i as f64,
        }
    }

    /// Whether the value is below zero.
    pub fn is_negative(self) -> bool {
        matches!(self.0, Repr::Neg(_))
    }

    /// The integer an `f64` holds exactly, if it is integral and within
    /// `i64::MIN ..= u64::MAX` (`-0.0` gives 0).
    ///
    /// ```
    /// use codecbus_json::JsInt;
    ///
    /// assert_eq!(JsInt::from_f64_exact(3.0), Some(JsInt::from(3)));
    /// assert_eq!(JsInt::from_f64_exact(3.5), None);
    /// assert_eq!(JsInt::from_f64_exact(1e20), None); // beyond u64::MAX
    /// ```
    pub fn from_f64_exact(f: f64) -> Option<JsInt> {
        float_as_i128(f).and_then(|i| JsInt::try_from(i).ok())
    }

    pub(crate) fn split(self) -> Result<u64, i64> {
        match self.0 {
            Repr::Pos(u) => Ok(u),
            Repr::Neg(i) => Err(i),
        }
    }
}

/// The integer `f` holds exactly, when it is integral and within
/// `-2^63 ..= 2^64 - 1` (every such float converts to `i128` without loss).
pub(crate) fn float_as_i128(f: f64) -> Option<i128> {
    const LOW: f64 = -9_223_372_036_854_775_808.0; // -2^63
    const HIGH: f64 = 18_446_744_073_709_551_616.0; // 2^64
    if f.fract() == 0.0 && (LOW..HIGH).contains(&f) {
        Some(f as i128)
    } else {
        None
    }
}

/// JSON number equality between an integer and a float: exact.
pub(crate) fn int_eq_float(i: JsInt, f: f64) -> bool {
    float_as_i128(f) == Some(i.as_i128())
}

/// JSON number equality between two floats: `0.0 == -0.0`, and NaN equals
/// NaN so that `Eq` stays reflexive.
pub(crate) fn float_eq(a: f64, b: f64) -> bool {
    a == b || (a.is_nan() && b.is_nan())
}

/// Hashes a float so that it agrees with [`int_eq_float`] and [`float_eq`].
pub(crate) fn hash_float<H: Hasher>(f: f64, state: &mut H) {
    match float_as_i128(f) {
        Some(i) => hash_integer(i, state),
        None => {
            state.write_u8(1);
            let bits = if f.is_nan() {
                f64::NAN.to_bits()
            } else {
                f.to_bits()
            };
            state.write_u64(bits);
        }
    }
}

pub(crate) fn hash_integer<H: Hasher>(i: i128, state: &mut H) {
    state.write_u8(0);
    state.write_i128(i);
}

impl Ord for JsInt {
    fn cmp(&self, other: &Self) -> Ordering {
        self.as_i128().cmp(&other.as_i128())
    }
}

impl PartialOrd for JsInt {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl fmt::Debug for JsInt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Display::fmt(self, f)
    }
}

impl fmt::Display for JsInt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Repr::Pos(u) => fmt::Display::fmt(&u, f),
            Repr::Neg(i) => fmt::Display::fmt(&i, f),
        }
    }
}

macro_rules! from_unsigned {
    ($($ty:ty),*) => {$(
        impl From<$ty> for JsInt {
            #[inline]
            fn from(v: $ty) -> Self {
                JsInt(Repr::Pos(v as u64))
            }
        }
    )*};
}
from_unsigned!(u8, u16, u32, u64, usize);

macro_rules! from_signed {
    ($($ty:ty),*) => {$(
        impl From<$ty> for JsInt {
            #[inline]
            fn from(v: $ty) -> Self {
                if v < 0 {
                    JsInt(Repr::Neg(v as i64))
                } else {
                    JsInt(Repr::Pos(v as u64))
                }
            }
        }
    )*};
}
from_signed!(i8, i16, i32, i64, isize);

/// The error of converting an out-of-range `i128`/`u128` into a [`JsInt`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("integer out of the JSON integer range (i64::MIN ..= u64::MAX)")]
pub struct JsIntRangeError(());

impl TryFrom<i128> for JsInt {
    type Error = JsIntRangeError;
    fn try_from(v: i128) -> Result<Self, Self::Error> {
        if let Ok(u) = u64::try_from(v) {
            Ok(JsInt(Repr::Pos(u)))
        } else if let Ok(i) = i64::try_from(v) {
            Ok(JsInt(Repr::Neg(i)))
        } else {
            Err(JsIntRangeError(()))
        }
    }
}

impl TryFrom<u128> for JsInt {
    type Error = JsIntRangeError;
    fn try_from(v: u128) -> Result<Self, Self::Error> {
        u64::try_from(v)
            .map(|u| JsInt(Repr::Pos(u)))
            .map_err(|_| JsIntRangeError(()))
    }
}

impl From<JsInt> for i128 {
    fn from(v: JsInt) -> i128 {
        v.as_i128()
    }
}

impl serde::Serialize for JsInt {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            Repr::Pos(u) => s.serialize_u64(u),
            Repr::Neg(i) => s.serialize_i64(i),
        }
    }
}

impl JsInt {
    /// Appends the decimal text of the value, as `serde_json` prints it.
    pub(crate) fn write_decimal(self, out: &mut Vec<u8>) {
        let mut digits = itoa::Buffer::new();
        let text = match self.0 {
            Repr::Pos(u) => digits.format(u),
            Repr::Neg(i) => digits.format(i),
        };
        out.extend_from_slice(text.as_bytes());
    }
}

// `Hash` is derived for `JsInt` alone; `JsValue` hashes numbers through
// `hash_integer` so that integers and integral floats agree.
impl JsInt {
    pub(crate) fn hash_as_number<H: Hasher>(self, state: &mut H) {
        hash_integer(self.as_i128(), state);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn float_int_equality_is_exact() {
        assert!(int_eq_float(JsInt::from(1), 1.0));
        assert!(int_eq_float(JsInt::from(0), -0.0));
        // 2^53 + 1 is not representable; its nearest float is 2^53.
        let n = (1u64 << 53) + 1;
        assert!(!int_eq_float(JsInt::from(n), n as f64));
        assert!(int_eq_float(
            JsInt::from(u64::MAX - 2047),
            (u64::MAX - 2047) as f64
        ));
        assert!(!int_eq_float(JsInt::from(u64::MAX), u64::MAX as f64)); // rounds to 2^64
        assert!(int_eq_float(JsInt::MIN, i64::MIN as f64));
        assert!(!int_eq_float(JsInt::from(1), f64::NAN));
    }

    #[test]
    fn i128_bounds() {
        assert!(JsInt::try_from(u64::MAX as i128 + 1).is_err());
        assert!(JsInt::try_from(i64::MIN as i128 - 1).is_err());
        assert_eq!(JsInt::try_from(-1i128).unwrap().as_i64(), Some(-1));
    }
}
