//! Specs of the three documents beside this file, for the tests and the
//! benchmarks (included with `#[path]`).
//!
//! The including module must have the JSON crate in scope as `json`
//! (`use codecbus_json as json;` or `use codecbus::json;`). Each spec is
//! strict wherever the document's objects share one set of members, and
//! states what the document shows of its values: id ranges, string
//! patterns and lengths, array lengths.

use super::json::jsobj_spec;
use super::json::spec::{
    Spec, StrSpec, array_of, boolean, float, integer, map_of, null, number, one_of, one_of_values,
    string, tuple,
};

/// The spec of the document `name` (`twitter`, `citm_catalog` or
/// `canada`), or `None` for another name.
pub(crate) fn by_name(name: &str) -> Option<Spec> {
    match name {
        "twitter" => Some(twitter()),
        "citm_catalog" => Some(citm_catalog()),
        "canada" => Some(canada()),
        _ => None,
    }
}

/// A string matching `pattern` (all patterns here are valid).
fn matching(pattern: &str) -> StrSpec {
    string().pattern(pattern)
}

/// Decimal digits, as Twitter writes ids in `*_str` members.
fn id_str() -> Spec {
    matching("^[0-9]+$").length(1..=20).into()
}

/// A colour in hexadecimal, `1A1B1F`.
fn colour() -> Spec {
    matching("^[0-9A-Fa-f]{6}$").into()
}

/// `Sun Aug 31 00:28:59 +0000 2014`.
fn timestamp() -> Spec {
    matching(r"^(Mon|Tue|Wed|Thu|Fri|Sat|Sun) [A-Z][a-z]{2} [0-9]{2} [0-9]{2}:[0-9]{2}:[0-9]{2} \+0000 [0-9]{4}$")
        .into()
}

/// Start and end offsets of an entity in a text.
fn indices() -> Spec {
    tuple((integer().min(0), integer().min(0))).into()
}

fn url_entity() -> Spec {
    jsobj_spec! {
        "url": matching("^https?://"),
        "expanded_url": string(),
        "display_url": string(),
        "indices": indices(),
    }
}

fn user() -> Spec {
    jsobj_spec! {
        "id": integer().min(1),
        "id_str": id_str(),
        "name": string().length(..=20),
        "screen_name": matching("^[A-Za-z0-9_]+$").length(1..=15),
        "location": string(),
        "description": string().length(..=160),
        "url": string().nullable(),
        "entities": {
            "description": { "urls": array_of(url_entity()) },
            "url"?: { "urls": array_of(url_entity()).length(1..) },
        },
        "protected": boolean(),
        "followers_count": integer().min(0),
        "friends_count": integer().min(0),
        "listed_count": integer().min(0),
        "created_at": timestamp(),
        "favourites_count": integer().min(0),
        "utc_offset": integer().range(-50_400..=50_400).nullable(),
        "time_zone": string().nullable(),
        "geo_enabled": boolean(),
        "verified": boolean(),
        "statuses_count": integer().min(0),
        "lang": string().length(2..=5),
        "contributors_enabled": boolean(),
        "is_translator": boolean(),
        "is_translation_enabled": boolean(),
        "profile_background_color": colour(),
        "profile_background_image_url": matching("^http://"),
        "profile_background_image_url_https": matching("^https://"),
        "profile_background_tile": boolean(),
        "profile_image_url": matching("^http://"),
        "profile_image_url_https": matching("^https://"),
        "profile_banner_url"?: matching("^https://"),
        "profile_link_color": colour(),
        "profile_sidebar_border_color": colour(),
        "profile_sidebar_fill_color": colour(),
        "profile_text_color": colour(),
        "profile_use_background_image": boolean(),
        "default_profile": boolean(),
        "default_profile_image": boolean(),
        "following": boolean(),
        "follow_request_sent": boolean(),
        "notifications": boolean(),
    }
}

fn media_size(resize: &str) -> Spec {
    jsobj_spec! {
        "w": integer().range(1..=4096),
        "h": integer().range(1..=4096),
        "resize": one_of_values([resize]),
    }
}

fn entities() -> Spec {
    jsobj_spec! {
        "hashtags": array_of(jsobj_spec! { "text": string().length(1..), "indices": indices() }),
        "symbols": array_of(jsobj_spec! { "text": string(), "indices": indices() }),
        "urls": array_of(url_entity()),
        "user_mentions": array_of(jsobj_spec! {
            "screen_name": string().length(1..=15),
            "name": string(),
            "id": integer().min(1),
            "id_str": id_str(),
            "indices": indices(),
        }),
        "media"?: array_of(jsobj_spec! {
            "id": integer().min(1),
            "id_str": id_str(),
            "indices": indices(),
            "media_url": matching("^http://"),
            "media_url_https": matching("^https://"),
            "url": string(),
            "display_url": string(),
            "expanded_url": string(),
            "type": one_of_values(["photo"]),
            "sizes": {
                "medium": media_size("fit"),
                "small": media_size("fit"),
                "thumb": media_size("crop"),
                "large": media_size("fit"),
            },
            "source_status_id"?: integer().min(1),
            "source_status_id_str"?: id_str(),
        }),
    }
}

/// A status; one that is a retweet holds the status it retweets, which
/// holds none (`one_of` no alternative: the member must be absent).
fn status(retweet: bool) -> Spec {
    let retweeted = if retweet {
        status(false)
    } else {
        one_of(Vec::<Spec>::new())
    };
    jsobj_spec! {
        "metadata": {
            "result_type": one_of_values(["recent", "popular"]),
            "iso_language_code": string().length(2..=3),
        },
        "created_at": timestamp(),
        "id": integer().min(1),
        "id_str": id_str(),
        "text": string().length(1..=140),
        "source": string(),
        "truncated": boolean(),
        "in_reply_to_status_id": integer().min(1).nullable(),
        "in_reply_to_status_id_str": id_str().nullable(),
        "in_reply_to_user_id": integer().min(1).nullable(),
        "in_reply_to_user_id_str": id_str().nullable(),
        "in_reply_to_screen_name": string().nullable(),
        "user": user(),
        "geo": null(),
        "coordinates": null(),
        "place": null(),
        "contributors": null(),
        "retweet_count": integer().min(0),
        "favorite_count": integer().min(0),
        "entities": entities(),
        "favorited": boolean(),
        "retweeted": boolean(),
        "possibly_sensitive"?: boolean(),
        "lang": string().length(2..=3),
        "retweeted_status"?: retweeted,
    }
}

/// `twitter.json`: a search response of 100 statuses.
pub(crate) fn twitter() -> Spec {
    jsobj_spec! {
        "statuses": array_of(status(true)).length(..=100),
        "search_metadata": {
            "completed_in": float().min(0.0),
            "max_id": integer().min(0),
            "max_id_str": id_str(),
            "next_results": matching(r"^\?max_id=[0-9]+&"),
            "query": string(),
            "refresh_url": matching(r"^\?since_id=[0-9]+&"),
            "count": integer().range(1..=100),
            "since_id": integer().min(0),
            "since_id_str": id_str(),
        },
    }
}

/// Object keys that are decimal ids.
fn id_keys() -> Spec {
    matching("^[0-9]+$").into()
}

/// Ids in the catalog: positive and within 32 bits.
fn catalog_id() -> Spec {
    integer().range(1..=u32::MAX).into()
}

fn names() -> Spec {
    map_of(string().length(1..)).keys(id_keys()).into()
}

/// `citm_catalog.json`: an event catalog, its maps keyed by decimal ids.
pub(crate) fn citm_catalog() -> Spec {
    jsobj_spec! {
        "areaNames": names(),
        "audienceSubCategoryNames": names(),
        "blockNames": names(),
        "events": map_of(jsobj_spec! {
            "description": string().nullable(),
            "id": catalog_id(),
            "logo": matching("^/images/[A-Za-z0-9+/]+$").nullable(),
            "name": string().length(1..),
            "subTopicIds": array_of(catalog_id()).unique(),
            "subjectCode": string().nullable(),
            "subtitle": string().nullable(),
            "topicIds": array_of(catalog_id()).unique(),
        }).keys(id_keys()),
        "performances": array_of(jsobj_spec! {
            "eventId": catalog_id(),
            "id": catalog_id(),
            "logo": matching("^/images/[A-Za-z0-9+/]+$").nullable(),
            "name": string().nullable(),
            "prices": array_of(jsobj_spec! {
                "amount": integer().min(0),
                "audienceSubCategoryId": catalog_id(),
                "seatCategoryId": catalog_id(),
            }).length(1..),
            "seatCategories": array_of(jsobj_spec! {
                "areas": array_of(jsobj_spec! {
                    "areaId": catalog_id(),
                    "blockIds": array_of(catalog_id()),
                }).length(1..),
                "seatCategoryId": catalog_id(),
            }).length(1..),
            "seatMapImage": string().nullable(),
            // Milliseconds since 1970: between 2000 and 2100.
            "start": integer().range(946_684_800_000_i64..4_102_444_800_000),
            "venueCode": matching("^[A-Z_]+$"),
        }),
        "seatCategoryNames": names(),
        "subTopicNames": names(),
        "subjectNames": names(),
        "topicNames": names(),
        "topicSubTopics": map_of(array_of(catalog_id()).unique()).keys(id_keys()),
        "venueNames": map_of(string().length(1..)),
    }
}

/// `canada.json`: a GeoJSON feature collection of polygons.
pub(crate) fn canada() -> Spec {
    let position = tuple((number().range(-180.0..=180.0), number().range(-90.0..=90.0)));
    // A linear ring: closed, so at least four positions.
    let ring = array_of(position).length(4..);
    jsobj_spec! {
        "type": one_of_values(["FeatureCollection"]),
        "features": array_of(jsobj_spec! {
            "type": one_of_values(["Feature"]),
            "properties": { "name": string() },
            "geometry": {
                "type": one_of_values(["Polygon"]),
                "coordinates": array_of(ring).length(1..),
            },
        }),
    }
}
