//! Values that conform to a spec.

use super::*;

impl Gen {
    /// Values that `node` accepts.
    pub(super) fn valid(&self, node: &Node, depth: u32) -> Result<Values, GenError> {
        let key = (std::ptr::from_ref(node) as usize, depth);
        if let Some(hit) = self.memo.borrow().get(&key) {
            return hit.clone();
        }
        let kind = self.valid_kind(node, depth).and_then(|s| {
            if node.checks.is_empty() {
                return Ok(s);
            }
            let checks = node.checks.clone();
            filtered(s, "user checks", move |v| {
                checks.iter().all(|c| (c.test)(v))
            })
            .ok_or_else(|| GenError::Check {
                message: node
                    .checks
                    .first()
                    .map_or_else(String::new, |c| c.message.to_string()),
            })
        });
        let out = match (node.nullable, kind) {
            (true, Ok(s)) => Ok(prop_oneof![1 => Just(JsValue::Null), 3 => s].boxed()),
            (true, Err(_)) => Ok(Just(JsValue::Null).boxed()),
            (false, r) => r,
        };
        self.memo.borrow_mut().insert(key, out.clone());
        out
    }

    pub(super) fn unsatisfiable(node: &Node) -> GenError {
        GenError::Unsatisfiable {
            spec: describe(node),
        }
    }

    /// Values of the node's kind and constraints, before its user checks
    /// and without `null` for a nullable node.
    pub(super) fn valid_kind(&self, node: &Node, depth: u32) -> Result<Values, GenError> {
        let sizes = self.sizes;
        Ok(match &node.kind {
            SpecKind::Any => any_value(sizes.max_depth(sizes.depth.min(depth))),
            SpecKind::Null => Just(JsValue::Null).boxed(),
            SpecKind::Bool => any::<bool>().prop_map(JsValue::Bool).boxed(),
            SpecKind::Str(s) => Strings::of(s, sizes).valid?.prop_map(JsValue::from).boxed(),
            SpecKind::Int(i) => {
                let (lo, hi) = (i.min.unwrap_or(INT_MIN), i.max.unwrap_or(INT_MAX));
                if lo.max(INT_MIN) > hi.min(INT_MAX) {
                    return Err(Self::unsatisfiable(node));
                }
                ints(lo, hi).prop_map(JsValue::Int).boxed()
            }
            SpecKind::Float(f) => match (lowest(f.min), highest(f.max)) {
                (Some(lo), Some(hi)) if lo <= hi => {
                    floats_in(lo, hi).prop_map(JsValue::Float).boxed()
                }
                _ => return Err(Self::unsatisfiable(node)),
            },
            SpecKind::Number(n) => {
                let (Some(lo), Some(hi)) = (lowest(n.min), highest(n.max)) else {
                    return Err(Self::unsatisfiable(node));
                };
                if lo > hi {
                    return Err(Self::unsatisfiable(node));
                }
                let floats = floats_in(lo, hi).prop_map(JsValue::Float).boxed();
                // Integers within the bounds (casts saturate; the range
                // is clamped to what a JsInt holds).
                #[allow(clippy::cast_possible_truncation)]
                let (ilo, ihi) = (lo.ceil() as i128, hi.floor() as i128);
                if ilo.max(INT_MIN) <= ihi.min(INT_MAX) {
                    prop_oneof![floats, ints(ilo, ihi).prop_map(JsValue::Int)].boxed()
                } else {
                    floats
                }
            }
            SpecKind::Values(values) => {
                if values.is_empty() {
                    return Err(Self::unsatisfiable(node));
                }
                select(values.to_vec()).boxed()
            }
            SpecKind::Array(a) => {
                let hi = self.upper(a.min_len, a.max_len);
                match self.valid(a.items.node(), depth) {
                    Ok(items) => self
                        .arrays(items, a.min_len, hi, a.unique)
                        .ok_or_else(|| Self::unsatisfiable(node))?
                        .prop_map(JsValue::Array)
                        .boxed(),
                    Err(_) if a.min_len == 0 => Just(JsValue::Array(JsArray::new())).boxed(),
                    Err(e) => return Err(e),
                }
            }
            SpecKind::Tuple(t) => {
                let items = t
                    .items
                    .iter()
                    .map(|s| self.valid(s.node(), depth))
                    .collect::<Result<Vec<_>, _>>()?;
                items
                    .prop_map(|v| JsValue::Array(v.into_iter().collect()))
                    .boxed()
            }
            SpecKind::Object(o) => self.objects(o, depth)?.prop_map(JsValue::Object).boxed(),
            SpecKind::Map(m) => {
                let hi = self.upper(m.min_len, m.max_len);
                let parts = self
                    .keys(m.keys.node(), depth)
                    .zip(self.valid(m.values.node(), depth).ok());
                match parts.and_then(|(k, v)| self.maps(k, v, m.min_len, hi)) {
                    Some(s) => s.prop_map(JsValue::Object).boxed(),
                    None if m.min_len == 0 => Just(JsValue::Object(JsObj::new())).boxed(),
                    None => return Err(Self::unsatisfiable(node)),
                }
            }
            SpecKind::OneOf(alts) => {
                let mut ok = Vec::new();
                let mut first_err = None;
                for alt in alts.iter() {
                    match self.valid(alt.node(), depth) {
                        Ok(s) => ok.push(s),
                        Err(e) => {
                            first_err.get_or_insert(e);
                        }
                    }
                }
                if ok.is_empty() {
                    return Err(first_err.unwrap_or_else(|| Self::unsatisfiable(node)));
                }
                Union::new(ok).boxed()
            }
            SpecKind::Ref(target) => match target.upgrade() {
                Some(def) if depth > 0 => self.valid(&def, depth - 1)?,
                Some(def) => {
                    return Err(GenError::TooDeep {
                        spec: describe(&def),
                    });
                }
                None => return Err(Self::unsatisfiable(node)),
            },
        })
    }

    /// Arrays of `lo..=hi` elements of `items`, distinct when `unique`.
    pub(super) fn arrays(
        &self,
        items: Values,
        lo: usize,
        hi: usize,
        unique: bool,
    ) -> Option<BoxedStrategy<JsArray>> {
        if lo > hi {
            return None;
        }
        let s = vec(items, lo..=hi);
        if !unique {
            return Some(s.prop_map(|v| v.into_iter().collect()).boxed());
        }
        let distinct = s
            .prop_map(|v| {
                let mut seen = HashSet::new();
                v.into_iter()
                    .filter(|x| seen.insert(x.clone()))
                    .collect::<JsArray>()
            })
            .boxed();
        filtered(distinct, "distinct elements", move |a: &JsArray| {
            a.len() >= lo
        })
    }

    /// Objects of `lo..=hi` members with keys from `keys` and values from
    /// `values`.
    pub(super) fn maps(
        &self,
        keys: BoxedStrategy<String>,
        values: Values,
        lo: usize,
        hi: usize,
    ) -> Option<BoxedStrategy<JsObj>> {
        if lo > hi {
            return None;
        }
        let s = vec((keys, values), lo..=hi)
            .prop_map(|kv| kv.into_iter().collect::<JsObj>())
            .boxed();
        if lo <= 1 {
            return Some(s);
        }
        filtered(s, "distinct keys", move |o: &JsObj| o.len() >= lo)
    }

    /// Strings that a map's key spec accepts.
    pub(super) fn keys(&self, node: &Node, depth: u32) -> Option<BoxedStrategy<String>> {
        let s = match &node.kind {
            SpecKind::Str(s) => Strings::of(s, self.sizes).valid.ok()?,
            SpecKind::Any => text(0, self.sizes.str_len),
            SpecKind::Values(values) => pool(
                values
                    .iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect(),
            )?,
            SpecKind::OneOf(alts) => {
                let ok: Vec<_> = alts
                    .iter()
                    .filter_map(|a| self.keys(a.node(), depth))
                    .collect();
                if ok.is_empty() {
                    return None;
                }
                Union::new(ok).boxed()
            }
            SpecKind::Ref(target) if depth > 0 => {
                let def = target.upgrade()?;
                self.keys(&def, depth - 1)?
            }
            _ => return None,
        };
        if node.checks.is_empty() {
            return Some(s);
        }
        let checks = node.checks.clone();
        filtered(s, "user checks", move |k: &String| {
            let v = JsValue::from(k.as_str());
            checks.iter().all(|c| (c.test)(&v))
        })
    }

    /// Objects that an object spec accepts.
    pub(super) fn objects(
        &self,
        o: &crate::spec::model::ObjSpec,
        depth: u32,
    ) -> Result<BoxedStrategy<JsObj>, GenError> {
        type Member = Option<(Arc<str>, JsValue)>;
        let mut parts: Vec<BoxedStrategy<Member>> = Vec::new();
        for f in &o.fields {
            let key = Arc::clone(&f.key);
            match (self.valid(f.spec.node(), depth), f.required) {
                (Ok(s), true) => {
                    parts.push(s.prop_map(move |v| Some((Arc::clone(&key), v))).boxed())
                }
                (Ok(s), false) => parts.push(
                    proptest::option::of(s)
                        .prop_map(move |v| v.map(|v| (Arc::clone(&key), v)))
                        .boxed(),
                ),
                (Err(e), true) => return Err(e),
                (Err(_), false) => {}
            }
        }
        let extra = if o.strict || self.sizes.len == 0 {
            Just(Vec::new()).boxed()
        } else {
            let small = self.sizes.max_depth(self.sizes.depth.min(depth).min(1));
            vec((text(0, self.sizes.str_len), any_value(small)), 0..=2).boxed()
        };
        let named: Arc<[Arc<str>]> = o.fields.iter().map(|f| Arc::clone(&f.key)).collect();
        Ok((parts, extra)
            .prop_map(move |(parts, extra)| {
                let mut obj: JsObj = parts.into_iter().flatten().collect();
                for (k, v) in extra {
                    if named.binary_search_by(|n| (**n).cmp(k.as_str())).is_err() {
                        obj.insert(k, v);
                    }
                }
                obj
            })
            .boxed())
    }
}
