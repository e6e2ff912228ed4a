// Consumer guards: a check a body must pass before it is queued for a
// consumer, and for a cluster transport a decode that checks in the same
// pass. The one guard today is a JSON spec (`ConsumerOptions::spec`,
// feature `json`); the delivery code knows guards only through `Guard`.

use std::any::Any;
use std::sync::Arc;

use codecbus_core::AnyBody;

/// A consumer's guard. Held by the consumer's slot in the handler table;
/// the delivery asks it before reserving room, so a refused body costs no
/// copy and never reaches the handler.
pub(crate) trait Guard: Send + Sync + 'static {
    /// `Err` with a text that lists every reason `body` is refused.
    fn check(&self, body: &(dyn Any + Send + Sync)) -> Result<(), String>;

    /// Decodes `payload`, written by the codec named `codec`, and checks it
    /// in the same pass; `None` when this guard does not read that codec
    /// (the caller then decodes as usual and calls [`check`](Self::check)).
    #[cfg_attr(not(feature = "nats"), allow(dead_code))]
    fn decode(&self, codec: &str, payload: &[u8]) -> Option<Result<AnyBody, GuardedDecode>>;
}

/// Why a guarded decode gave no body.
#[cfg_attr(not(all(feature = "nats", feature = "json")), allow(dead_code))]
#[derive(Debug)]
pub(crate) enum GuardedDecode {
    /// The payload is not a value of the codec (the plain decoder's text).
    Undecodable(String),
    /// A value that the guard refuses: every reason, as `check` lists them.
    Refused(String),
}

/// A guard shared by the slots it was registered with.
pub(crate) type GuardRef = Arc<dyn Guard>;

/// Whether two slots hold the same guard (one registration's options).
#[inline]
pub(crate) fn same(a: &GuardRef, b: &GuardRef) -> bool {
    std::ptr::addr_eq(Arc::as_ptr(a), Arc::as_ptr(b))
}

#[cfg(feature = "json")]
pub(crate) use self::spec::for_type as spec_guard;

#[cfg(feature = "json")]
mod spec {
    use std::any::{Any, type_name};
    use std::fmt::Write as _;
    use std::marker::PhantomData;
    use std::sync::Arc;

    use codecbus_core::{AnyBody, MessageCodec, Reader};
    use codecbus_json::spec::{Spec, SpecDecodeError, Violation};
    use codecbus_json::{JsArray, JsObj, JsValue};

    use super::{Guard, GuardRef, GuardedDecode};

    /// At most this many violations are listed in a refusal's text; the
    /// rest are counted.
    const LISTED: usize = 16;

    /// A JSON body type a spec can guard.
    trait JsonBody: MessageCodec + Send + Sync + 'static {
        /// The registered codec name of the type.
        const CODEC: &'static str;
        fn to_value(&self) -> JsValue;
        fn from_value(value: JsValue) -> Option<Self>;
    }

    impl JsonBody for JsValue {
        const CODEC: &'static str = "json-value";
        fn to_value(&self) -> JsValue {
            self.clone()
        }
        fn from_value(value: JsValue) -> Option<Self> {
            Some(value)
        }
    }

    impl JsonBody for JsObj {
        const CODEC: &'static str = "json-obj-value";
        fn to_value(&self) -> JsValue {
            JsValue::Object(self.clone())
        }
        fn from_value(value: JsValue) -> Option<Self> {
            match value {
                JsValue::Object(o) => Some(o),
                _ => None,
            }
        }
    }

    impl JsonBody for JsArray {
        const CODEC: &'static str = "json-array-value";
        fn to_value(&self) -> JsValue {
            JsValue::Array(self.clone())
        }
        fn from_value(value: JsValue) -> Option<Self> {
            match value {
                JsValue::Array(a) => Some(a),
                _ => None,
            }
        }
    }

    struct SpecGuard<T> {
        spec: Spec,
        body: PhantomData<fn() -> T>,
    }

    impl<T: JsonBody> SpecGuard<T> {
        fn refusal(&self, value: &JsValue) -> Option<String> {
            if self.spec.is_valid(value) {
                return None;
            }
            Some(list(&self.spec.validate(value)))
        }
    }

    impl<T: JsonBody> Guard for SpecGuard<T> {
        fn check(&self, body: &(dyn Any + Send + Sync)) -> Result<(), String> {
            // The slot admits bodies of `T` only, so this always matches.
            let Some(body) = body.downcast_ref::<T>() else {
                return Err(format!("not a `{}`", type_name::<T>()));
            };
            self.refusal(&body.to_value()).map_or(Ok(()), Err)
        }

        fn decode(&self, codec: &str, payload: &[u8]) -> Option<Result<AnyBody, GuardedDecode>> {
            if codec != T::CODEC {
                return None;
            }
            Some(match self.spec.decode(payload) {
                Ok(value) => match T::from_value(value) {
                    Some(body) => Ok(Arc::new(body) as AnyBody),
                    // The spec admits another kind than the codec writes:
                    // what the plain decoder says about it.
                    None => plain::<T>(payload).and_then(|_| {
                        Err(GuardedDecode::Undecodable(format!(
                            "not a value of codec {codec:?}"
                        )))
                    }),
                },
                // Cold: decode the whole value to list every violation.
                Err(SpecDecodeError::Invalid(_)) => plain::<T>(payload).and_then(|body| {
                    Err(GuardedDecode::Refused(
                        self.refusal(&body.to_value())
                            .unwrap_or_else(|| "the value breaks the spec".to_owned()),
                    ))
                }),
                Err(SpecDecodeError::Decode(e)) => Err(GuardedDecode::Undecodable(e.to_string())),
            })
        }
    }

    fn plain<T: JsonBody>(payload: &[u8]) -> Result<T, GuardedDecode> {
        let mut r = Reader::new(payload);
        T::decode(&mut r).map_err(|e| GuardedDecode::Undecodable(e.to_string()))
    }

    /// `violation; violation; ...`, at most [`LISTED`], then how many more.
    fn list(violations: &[Violation]) -> String {
        let mut text = String::from("it does not conform to the consumer's spec: ");
        for (i, v) in violations.iter().take(LISTED).enumerate() {
            if i > 0 {
                text.push_str("; ");
            }
            let _ = write!(text, "{v}");
        }
        if violations.len() > LISTED {
            let _ = write!(text, "; and {} more", violations.len() - LISTED);
        }
        text
    }

    /// The guard for a consumer of `T` with `spec`; `Err` with the name of
    /// `T` when `T` is not a JSON body type.
    pub(crate) fn for_type<T: 'static>(spec: &Spec) -> Result<GuardRef, &'static str> {
        fn make<T: JsonBody>(spec: &Spec) -> GuardRef {
            Arc::new(SpecGuard::<T> {
                spec: spec.clone(),
                body: PhantomData,
            })
        }
        let id = std::any::TypeId::of::<T>();
        if id == std::any::TypeId::of::<JsValue>() {
            Ok(make::<JsValue>(spec))
        } else if id == std::any::TypeId::of::<JsObj>() {
            Ok(make::<JsObj>(spec))
        } else if id == std::any::TypeId::of::<JsArray>() {
            Ok(make::<JsArray>(spec))
        } else {
            Err(type_name::<T>())
        }
    }
}

#[cfg(all(test, feature = "json"))]
mod tests {
    use codecbus_core::to_vec;
    use codecbus_json::spec::{Spec, integer, string};
    use codecbus_json::{JsObj, JsValue, jsobj, jsobj_spec};

    use super::*;

    fn guard() -> GuardRef {
        let spec: Spec = jsobj_spec! { "sku": string().length(1..), "qty": integer().min(1) };
        spec_guard::<JsObj>(&spec).unwrap()
    }

    #[test]
    fn a_spec_guard_decodes_its_own_codec_and_checks_in_the_same_pass() {
        let guard = guard();
        let good = jsobj! { "sku": "tea", "qty": 2 };
        let body = guard
            .decode("json-obj-value", &to_vec(&good).unwrap())
            .unwrap()
            .unwrap();
        assert_eq!(body.downcast_ref::<JsObj>(), Some(&good));
        assert_eq!(guard.check(&good), Ok(()));

        let bad = to_vec(&jsobj! { "sku": "", "qty": 0 }).unwrap();
        match guard.decode("json-obj-value", &bad) {
            Some(Err(GuardedDecode::Refused(reasons))) => assert_eq!(
                reasons,
                "it does not conform to the consumer's spec: /qty: expected integer >= 1, found 0; \
                 /sku: expected string of at least 1 character, found a string of 0 characters"
            ),
            other => panic!("not refused: {other:?}"),
        }
    }

    #[test]
    fn a_spec_guard_reports_bad_bytes_and_leaves_other_codecs_alone() {
        let guard = guard();
        let good = to_vec(&jsobj! { "sku": "tea", "qty": 2 }).unwrap();
        for bytes in [
            &good[..good.len() - 1],
            &[0xc1][..],
            &[good.as_slice(), &[0]].concat(),
        ] {
            assert!(
                matches!(
                    guard.decode("json-obj-value", bytes),
                    Some(Err(GuardedDecode::Undecodable(_)))
                ),
                "{bytes:?}"
            );
        }
        assert!(guard.decode("json-value", &good).is_none());
        // A value the spec could take but the codec does not write.
        let number = to_vec(&JsValue::from(1)).unwrap();
        assert!(matches!(
            guard.decode("json-obj-value", &number),
            Some(Err(GuardedDecode::Undecodable(_)))
        ));
    }

    #[test]
    fn only_json_bodies_take_a_spec() {
        let spec: Spec = integer().into();
        assert!(spec_guard::<JsValue>(&spec).is_ok());
        assert_eq!(spec_guard::<u32>(&spec).err(), Some("u32"));
    }
}
