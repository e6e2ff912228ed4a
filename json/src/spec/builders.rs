//! The builder methods of the constraint records ([`StrSpec`],
//! [`IntSpec`], ...) and their conversion into a [`Spec`].

use std::ops::{Bound, RangeBounds};
use std::sync::Arc;

use regex::Regex;

use super::model::{
    ArraySpec, Field, FieldIndex, FloatSpec, IntSpec, MapSpec, NumberSpec, ObjSpec, Spec, SpecKind,
    StrSpec, TupleSpec,
};
use crate::number::JsInt;
use crate::tree::JsValue;

/// Converts a range of `usize` into inclusive `(min, max)`; an empty range
/// gives `min > max`, which nothing satisfies.
fn len_bounds(range: impl RangeBounds<usize>) -> (usize, Option<usize>) {
    let min = match range.start_bound() {
        Bound::Included(&n) => n,
        Bound::Excluded(&n) => n.saturating_add(1),
        Bound::Unbounded => 0,
    };
    let max = match range.end_bound() {
        Bound::Included(&n) => Some(n),
        Bound::Excluded(&0) => {
            // `..0`: nothing; `min = 1, max = 0` says so.
            return (min.max(1), Some(0));
        }
        Bound::Excluded(&n) => Some(n - 1),
        Bound::Unbounded => None,
    };
    (min, max)
}

fn copied(b: Bound<&f64>) -> Bound<f64> {
    match b {
        Bound::Included(&x) => Bound::Included(x),
        Bound::Excluded(&x) => Bound::Excluded(x),
        Bound::Unbounded => Bound::Unbounded,
    }
}

impl StrSpec {
    /// The number of characters (Unicode scalar values, not bytes) must be
    /// in `range`.
    #[must_use]
    pub fn length(mut self, range: impl RangeBounds<usize>) -> Self {
        (self.min_len, self.max_len) = len_bounds(range);
        self
    }

    /// The string must match the regular expression `pattern` (`regex`
    /// crate syntax; it matches anywhere unless anchored with `^...$`).
    ///
    /// For a pattern written in the code, as `Regex::new(..).unwrap()` is
    /// used for one: a pattern that comes from data goes through
    /// [`try_pattern`](StrSpec::try_pattern) instead.
    ///
    /// # Panics
    ///
    /// When `pattern` is not a valid expression or compiles to more than
    /// the `regex` crate's size limit, with a message naming the pattern
    /// and the `regex` crate's error.
    ///
    /// # Examples
    ///
    /// ```
    /// use codecbus_json::spec::string;
    /// use codecbus_json::JsValue;
    ///
    /// let sku = string().pattern("^[a-z]{3}$");
    /// assert!(sku.is_valid(&JsValue::from("tea")));
    /// assert!(!sku.is_valid(&JsValue::from("TEA")));
    /// ```
    #[must_use]
    #[track_caller]
    pub fn pattern(self, pattern: &str) -> Self {
        match Regex::new(pattern) {
            Ok(re) => self.matching(re),
            Err(e) => panic!("invalid string pattern /{pattern}/: {e}"),
        }
    }

    /// The string must match the regular expression `pattern`, as
    /// [`pattern`](StrSpec::pattern), for a pattern that may be invalid
    /// (read from a file, given by a user).
    ///
    /// # Errors
    ///
    /// The `regex` crate's error when `pattern` is not a valid expression
    /// or compiles to more than its size limit.
    ///
    /// # Examples
    ///
    /// ```
    /// use codecbus_json::spec::string;
    ///
    /// let from_config = "^[a-z]+$";
    /// let spec = string().try_pattern(from_config).expect("a valid pattern");
    /// # let _ = spec;
    /// assert!(string().try_pattern("(").is_err());
    /// ```
    pub fn try_pattern(self, pattern: &str) -> Result<Self, regex::Error> {
        Ok(self.matching(Regex::new(pattern)?))
    }

    /// The string must match `regex`, already compiled.
    ///
    /// # Examples
    ///
    /// ```
    /// use codecbus_json::spec::string;
    /// use codecbus_json::JsValue;
    /// use regex::Regex;
    ///
    /// let digits = Regex::new("^[0-9]+$").unwrap();
    /// assert!(string().matching(digits).is_valid(&JsValue::from("42")));
    /// ```
    #[must_use]
    pub fn matching(mut self, regex: Regex) -> Self {
        self.pattern = Some(regex);
        self
    }
}

impl IntSpec {
    /// The value must be at least `min`.
    #[must_use]
    pub fn min(mut self, min: impl Into<JsInt>) -> Self {
        self.min = Some(min.into().as_i128());
        self
    }

    /// The value must be at most `max`.
    #[must_use]
    pub fn max(mut self, max: impl Into<JsInt>) -> Self {
        self.max = Some(max.into().as_i128());
        self
    }

    /// The value must be in `range` (`1..=100`, `0..`, `..10`); the bounds
    /// may be any integer type up to `i64` and `u64`.
    #[must_use]
    pub fn range<N: Into<JsInt> + Copy>(mut self, range: impl RangeBounds<N>) -> Self {
        let v = |n: &N| (*n).into().as_i128();
        self.min = match range.start_bound() {
            Bound::Included(n) => Some(v(n)),
            Bound::Excluded(n) => Some(v(n) + 1),
            Bound::Unbounded => None,
        };
        self.max = match range.end_bound() {
            Bound::Included(n) => Some(v(n)),
            Bound::Excluded(n) => Some(v(n) - 1),
            Bound::Unbounded => None,
        };
        self
    }
}

macro_rules! float_bounds {
    ($ty:ident) => {
        impl $ty {
            /// The value must be at least `min`.
            #[must_use]
            pub fn min(mut self, min: f64) -> Self {
                self.min = Bound::Included(min);
                self
            }

            /// The value must be at most `max`.
            #[must_use]
            pub fn max(mut self, max: f64) -> Self {
                self.max = Bound::Included(max);
                self
            }

            /// The value must be in `range` (`0.0..1.0` excludes `1.0`,
            /// `0.0..=1.0` includes it).
            #[must_use]
            pub fn range(mut self, range: impl RangeBounds<f64>) -> Self {
                self.min = copied(range.start_bound());
                self.max = copied(range.end_bound());
                self
            }
        }
    };
}

float_bounds!(FloatSpec);
float_bounds!(NumberSpec);

impl ArraySpec {
    /// The number of elements must be in `range`.
    #[must_use]
    pub fn length(mut self, range: impl RangeBounds<usize>) -> Self {
        (self.min_len, self.max_len) = len_bounds(range);
        self
    }

    /// No two elements may be equal (JSON equality: `1` and `1.0` are).
    #[must_use]
    pub fn unique(mut self) -> Self {
        self.unique = true;
        self
    }
}

impl MapSpec {
    /// Every key, as a JSON string, must follow `keys` (typically a
    /// [`string`](super::string) with a pattern or a length).
    #[must_use]
    pub fn keys(mut self, keys: impl Into<Spec>) -> Self {
        self.keys = keys.into();
        self
    }

    /// The number of members must be in `range`.
    #[must_use]
    pub fn length(mut self, range: impl RangeBounds<usize>) -> Self {
        (self.min_len, self.max_len) = len_bounds(range);
        self
    }
}

impl ObjSpec {
    fn field(mut self, key: impl Into<Arc<str>>, spec: impl Into<Spec>, required: bool) -> Self {
        let field = Field {
            key: key.into(),
            spec: spec.into(),
            required,
        };
        match self.fields.binary_search_by(|f| f.key.cmp(&field.key)) {
            Ok(i) => {
                if self.fields[i].required {
                    self.required -= 1;
                }
                self.fields[i] = field;
            }
            Err(i) => self.fields.insert(i, field),
        }
        if required {
            self.required += 1;
        }
        self.index = FieldIndex::rebuild(&self.fields);
        self
    }

    /// A member that must be present and follow `spec`. Naming a key again
    /// replaces its earlier definition.
    #[must_use]
    pub fn required(self, key: impl Into<Arc<str>>, spec: impl Into<Spec>) -> Self {
        self.field(key, spec, true)
    }

    /// A member that may be absent, and follows `spec` when present.
    /// Naming a key again replaces its earlier definition.
    #[must_use]
    pub fn optional(self, key: impl Into<Arc<str>>, spec: impl Into<Spec>) -> Self {
        self.field(key, spec, false)
    }

    /// Members other than the named ones are accepted, with any value.
    #[must_use]
    pub fn lenient(mut self) -> Self {
        self.strict = false;
        self
    }

    /// Members other than the named ones are rejected (the default).
    #[must_use]
    pub fn strict(mut self) -> Self {
        self.strict = true;
        self
    }
}

macro_rules! into_spec {
    ($($ty:ident => $kind:ident),*) => {$(
        impl From<$ty> for Spec {
            fn from(s: $ty) -> Spec {
                Spec::from_kind(SpecKind::$kind(s))
            }
        }

        impl $ty {
            /// As [`Spec::nullable`].
            #[must_use]
            pub fn nullable(self) -> Spec {
                Spec::from(self).nullable()
            }

            /// As [`Spec::check`].
            #[must_use]
            pub fn check<F>(self, message: impl Into<Arc<str>>, test: F) -> Spec
            where
                F: Fn(&JsValue) -> bool + Send + Sync + 'static,
            {
                Spec::from(self).check(message, test)
            }

            /// As [`Spec::named`].
            #[must_use]
            pub fn named(self, name: impl Into<Arc<str>>) -> Spec {
                Spec::from(self).named(name)
            }
        }
    )*};
}

into_spec!(
    StrSpec => Str,
    IntSpec => Int,
    FloatSpec => Float,
    NumberSpec => Number,
    ArraySpec => Array,
    TupleSpec => Tuple,
    ObjSpec => Object,
    MapSpec => Map
);
