//! Security of a bus across NATS, against a real `nats-server`: TLS with
//! the right and an unknown root certificate, mutual TLS, NKey and
//! credentials-file (operator mode, JWT) authentication, least-privilege
//! subject permissions, malformed frames written by a raw TCP peer, and a
//! stream of hostile requests. Certificates, key pairs and JWTs are made
//! by the tests.
#![cfg(feature = "nats")]

mod common;
#[path = "common/nats.rs"]
mod harness;

use std::path::PathBuf;
use std::time::Duration;

use codecbus_bus::{BuildError, BuildErrorKind, EventBus, Message, NatsOptions};
use harness::{Config, NatsServer, Tls};
use rcgen::{
    BasicConstraints, CertificateParams, CertifiedIssuer, DnType, ExtendedKeyUsagePurpose, IsCa,
    KeyPair, KeyUsagePurpose,
};

fn options(url: &str) -> NatsOptions {
    NatsOptions::new(url)
        .connection_timeout(Duration::from_secs(3))
        .max_reconnect_delay(Duration::from_millis(50))
}

async fn connect(options: NatsOptions) -> Result<EventBus, BuildError> {
    EventBus::builder()
        .default_timeout(Duration::from_secs(5))
        .nats(options)
        .connect()
        .await
}

/// The whole cause chain of `err`, lower-cased, on one line.
fn causes(err: &BuildError) -> String {
    common::chain_texts(err).join(" / ").to_lowercase()
}

/// A consumer on `server_side` answers a request from `client_side`.
async fn round_trip(client_side: &EventBus, server_side: &EventBus) {
    let _c = server_side.consumer(
        "echo",
        |m: Message<u64>| async move { m.reply(*m.body() + 1) },
    );
    server_side.flush().await.unwrap();
    let r: Message<u64> = client_side.request("echo", 41u64).await.unwrap();
    assert_eq!(*r.body(), 42);
}

// ---------------------------------------------------------------- TLS

/// A certificate authority made for one test.
struct Authority {
    issuer: CertifiedIssuer<'static, KeyPair>,
}

impl Authority {
    fn new(name: &str) -> Self {
        let mut params = CertificateParams::new(Vec::<String>::new()).unwrap();
        params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
        params.distinguished_name.push(DnType::CommonName, name);
        params.key_usages = vec![
            KeyUsagePurpose::KeyCertSign,
            KeyUsagePurpose::CrlSign,
            KeyUsagePurpose::DigitalSignature,
        ];
        let key = KeyPair::generate().unwrap();
        Self {
            issuer: CertifiedIssuer::self_signed(params, key).unwrap(),
        }
    }

    fn pem(&self) -> String {
        self.issuer.pem()
    }

    /// A leaf certificate and its key (PEM): for the server on the
    /// loopback (`127.0.0.1`, `localhost`), or for a client.
    fn leaf(&self, name: &str, server: bool) -> (String, String) {
        let names = if server {
            vec!["127.0.0.1".to_owned(), "localhost".to_owned()]
        } else {
            Vec::new()
        };
        let mut params = CertificateParams::new(names).unwrap();
        params.distinguished_name.push(DnType::CommonName, name);
        params.key_usages = vec![
            KeyUsagePurpose::DigitalSignature,
            KeyUsagePurpose::KeyEncipherment,
        ];
        params.extended_key_usages = vec![if server {
            ExtendedKeyUsagePurpose::ServerAuth
        } else {
            ExtendedKeyUsagePurpose::ClientAuth
        }];
        let key = KeyPair::generate().unwrap();
        let cert = params.signed_by(&key, &self.issuer).unwrap();
        (cert.pem(), key.serialize_pem())
    }
}

/// Writes `text` into the server's temporary directory (removed with it).
fn file(server: &NatsServer, name: &str, text: &str) -> PathBuf {
    let path = server.dir().join(name);
    std::fs::write(&path, text).unwrap();
    path
}

fn tls_server(test: &str, ca: &Authority, verify_clients: bool) -> Option<NatsServer> {
    let (cert_pem, key_pem) = ca.leaf("nats-server", true);
    let config = Config {
        tls: Some(Tls {
            cert_pem,
            key_pem,
            ca_pem: verify_clients.then(|| ca.pem()),
            verify: verify_clients,
        }),
        ..Config::default()
    };
    NatsServer::start_with(test, &config)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tls_with_the_right_root_certificate_and_an_unknown_one() {
    let ca = Authority::new("codecbus test CA");
    let Some(server) = tls_server("tls_with_the_right_root_certificate", &ca, false) else {
        return;
    };
    let root = file(&server, "client-ca.pem", &ca.pem());
    let url = server.url();

    let a = connect(options(&url).require_tls(true).root_certificates(&root))
        .await
        .unwrap();
    let b = connect(options(&url).root_certificates(&root))
        .await
        .unwrap();
    round_trip(&a, &b).await;

    // A client that trusts another CA (or only the system's) refuses the
    // server's certificate: a connect error whose cause says why.
    let stranger = Authority::new("another CA");
    let other_root = file(&server, "other-ca.pem", &stranger.pem());
    for o in [
        options(&url).root_certificates(&other_root),
        options(&url).require_tls(true),
    ] {
        let err = connect(o).await.unwrap_err();
        assert_eq!(err.kind(), BuildErrorKind::Connect);
        assert!(err.to_string().contains(&url), "{err}");
        let texts = common::assert_causes_told_once(&err, 1);
        let all = causes(&err);
        assert!(all.contains("unknownissuer"), "{texts:?}");
        eprintln!("unknown CA: {}", texts.join(" / "));
    }

    // A root file without a certificate, or none at all, is refused
    // before connecting, naming the file (the client alone would skip it
    // and fail on the server's certificate).
    let garbage = file(&server, "garbage.pem", "not a certificate\n");
    let missing = server.dir().join("missing.pem");
    for path in [garbage, missing] {
        let err = connect(options(&url).root_certificates(&path))
            .await
            .unwrap_err();
        assert_eq!(err.kind(), BuildErrorKind::Config);
        assert!(err.to_string().contains(&*path.to_string_lossy()), "{err}");
        assert!(err.to_string().contains("root certificates"), "{err}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn require_tls_refuses_a_plain_server() {
    let Some(server) = NatsServer::start("require_tls_refuses_a_plain_server") else {
        return;
    };
    let err = connect(options(&server.url()).require_tls(true))
        .await
        .unwrap_err();
    // The client starts TLS and reads the server's plain text as a
    // corrupt record: a connect error, if not an eloquent one.
    assert_eq!(err.kind(), BuildErrorKind::Connect);
    let texts = common::assert_causes_told_once(&err, 1);
    eprintln!("TLS required, plain server: {}", texts.join(" / "));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mutual_tls_with_a_client_certificate() {
    let ca = Authority::new("codecbus test CA");
    let Some(server) = tls_server("mutual_tls_with_a_client_certificate", &ca, true) else {
        return;
    };
    let url = server.url();
    let root = file(&server, "client-ca.pem", &ca.pem());
    let (cert, key) = ca.leaf("billing", false);
    let (cert, key) = (file(&server, "c.pem", &cert), file(&server, "c.key", &key));
    let with_cert = || {
        options(&url)
            .root_certificates(&root)
            .client_certificate(&cert, &key)
    };
    let a = connect(with_cert()).await.unwrap();
    let b = connect(with_cert()).await.unwrap();
    round_trip(&a, &b).await;

    // Without a certificate, or with one from another CA, the server
    // ends the handshake.
    let stranger = Authority::new("another CA");
    let (other_cert, other_key) = stranger.leaf("intruder", false);
    let other_cert = file(&server, "o.pem", &other_cert);
    let other_key = file(&server, "o.key", &other_key);
    for (what, o) in [
        (
            "no client certificate",
            options(&url).root_certificates(&root),
        ),
        (
            "a certificate of another CA",
            options(&url)
                .root_certificates(&root)
                .client_certificate(&other_cert, &other_key),
        ),
    ] {
        let err = connect(o).await.unwrap_err();
        assert_eq!(err.kind(), BuildErrorKind::Connect, "{what}");
        let texts = common::assert_causes_told_once(&err, 1);
        assert!(causes(&err).contains("badcertificate"), "{what}: {texts:?}");
    }
    // A key file that does not exist, or a certificate given as the key,
    // is refused before connecting, naming the file.
    for bad_key in [server.dir().join("missing.key"), cert.clone()] {
        let err = connect(
            options(&url)
                .root_certificates(&root)
                .client_certificate(&cert, &bad_key),
        )
        .await
        .unwrap_err();
        assert_eq!(err.kind(), BuildErrorKind::Config);
        assert!(err.to_string().contains("client key"), "{err}");
        assert!(
            err.to_string().contains(&*bad_key.to_string_lossy()),
            "{err}"
        );
    }
}

// ------------------------------------------------------- NKeys and JWTs

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nkey_authentication() {
    let user = nkeys::KeyPair::new_user();
    let config = Config {
        extra: Some(format!(
            "authorization {{ users = [ {{ nkey: \"{}\" }} ] }}",
            user.public_key()
        )),
        ..Config::default()
    };
    let Some(server) = NatsServer::start_with("nkey_authentication", &config) else {
        return;
    };
    let url = server.url();
    let seed = user.seed().unwrap();
    let a = connect(options(&url).nkey(&seed)).await.unwrap();
    let b = connect(options(&url).nkey(&seed)).await.unwrap();
    round_trip(&a, &b).await;

    let stranger = nkeys::KeyPair::new_user().seed().unwrap();
    for (what, o) in [
        ("another key", options(&url).nkey(stranger)),
        ("no key", options(&url)),
    ] {
        let err = connect(o).await.unwrap_err();
        assert_eq!(err.kind(), BuildErrorKind::Connect, "{what}");
        let texts = common::assert_causes_told_once(&err, 1);
        assert!(causes(&err).contains("authorization"), "{what}: {texts:?}");
    }
    // A seed that is not one is refused with the key parser's reason.
    let err = connect(options(&url).nkey("SUNOTASEED")).await.unwrap_err();
    assert_eq!(err.kind(), BuildErrorKind::Connect);
    eprintln!("bad seed: {}", common::chain_texts(&err).join(" / "));
}

/// A JWT as nats-server (jwt v2) reads it: `base64url(header) "."
/// base64url(claims) "." base64url(signature)`, unpadded; the header is
/// `{"typ":"JWT","alg":"ed25519-nkey"}`; the signature is the issuer's
/// NKey (ed25519) signature of the first two parts, dot included. The
/// claims: `jti` (an id), `iat` (seconds since the epoch), `iss` (the
/// issuer's public key), `sub` (the subject's public key), `name`, and
/// `nats`, the type-specific part with `"type"` (`operator`, `account`,
/// `user`) and `"version": 2`. An operator signs itself and its accounts,
/// an account its users.
fn jwt(issuer: &nkeys::KeyPair, subject: &str, name: &str, nats: serde_json::Value) -> String {
    use base64::Engine as _;
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    let b64 = base64::engine::general_purpose::URL_SAFE_NO_PAD;
    let iat = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let claims = serde_json::json!({
        "jti": format!("CODECBUSTEST{iat}X{}", NEXT.fetch_add(1, Ordering::Relaxed)),
        "iat": iat,
        "iss": issuer.public_key(),
        "sub": subject,
        "name": name,
        "nats": nats,
    });
    let signed = format!(
        "{}.{}",
        b64.encode(br#"{"typ":"JWT","alg":"ed25519-nkey"}"#),
        b64.encode(serde_json::to_vec(&claims).unwrap())
    );
    let signature = issuer.sign(signed.as_bytes()).unwrap();
    format!("{signed}.{}", b64.encode(signature))
}

/// An operator, one account and its users: the server config for operator
/// mode with an in-memory account resolver, and `.creds` files.
struct Operator {
    operator: nkeys::KeyPair,
    account: nkeys::KeyPair,
}

impl Operator {
    fn new() -> Self {
        Self {
            operator: nkeys::KeyPair::new_operator(),
            account: nkeys::KeyPair::new_account(),
        }
    }

    /// `operator`, `resolver: MEMORY` and `resolver_preload` with the
    /// account's JWT.
    fn server_config(&self) -> String {
        let operator = jwt(
            &self.operator,
            &self.operator.public_key(),
            "codecbus-test-operator",
            serde_json::json!({ "type": "operator", "version": 2 }),
        );
        let account = jwt(
            &self.operator,
            &self.account.public_key(),
            "codecbus-test-account",
            serde_json::json!({
                "limits": {
                    "subs": -1, "data": -1, "payload": -1, "imports": -1,
                    "exports": -1, "wildcards": true, "conn": -1, "leaf": -1
                },
                "default_permissions": { "pub": {}, "sub": {} },
                "type": "account",
                "version": 2
            }),
        );
        format!(
            "operator: \"{operator}\"\nresolver: MEMORY\nresolver_preload: {{\n  {}: \"{account}\"\n}}\n",
            self.account.public_key()
        )
    }

    /// The text of a `.creds` file for a new user signed by `signer`
    /// (this operator's account, or a stranger's).
    fn creds(signer: &nkeys::KeyPair, name: &str) -> String {
        let user = nkeys::KeyPair::new_user();
        let token = jwt(
            signer,
            &user.public_key(),
            name,
            serde_json::json!({
                "pub": {}, "sub": {}, "subs": -1, "data": -1, "payload": -1,
                "type": "user", "version": 2
            }),
        );
        format!(
            "-----BEGIN NATS USER JWT-----\n{token}\n------END NATS USER JWT------\n\n\
             -----BEGIN USER NKEY SEED-----\n{}\n------END USER NKEY SEED------\n",
            user.seed().unwrap()
        )
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn credentials_file_authentication() {
    let op = Operator::new();
    let config = Config {
        extra: Some(op.server_config()),
        ..Config::default()
    };
    let Some(server) = NatsServer::start_with("credentials_file_authentication", &config) else {
        return;
    };
    let url = server.url();
    let alice = file(
        &server,
        "alice.creds",
        &Operator::creds(&op.account, "alice"),
    );
    let bob = file(&server, "bob.creds", &Operator::creds(&op.account, "bob"));
    let a = connect(options(&url).credentials_file(&alice))
        .await
        .unwrap();
    let b = connect(options(&url).credentials_file(&bob)).await.unwrap();
    round_trip(&a, &b).await;

    // A user of an account the operator never signed, and no credentials.
    let stranger = nkeys::KeyPair::new_account();
    let mallory = file(
        &server,
        "mallory.creds",
        &Operator::creds(&stranger, "mallory"),
    );
    for (what, o) in [
        (
            "an unknown account",
            options(&url).credentials_file(&mallory),
        ),
        ("no credentials", options(&url)),
    ] {
        let err = connect(o).await.unwrap_err();
        assert_eq!(err.kind(), BuildErrorKind::Connect, "{what}");
        let texts = common::assert_causes_told_once(&err, 1);
        assert!(causes(&err).contains("authorization"), "{what}: {texts:?}");
    }
    // A file without a JWT is refused before connecting, naming the file.
    let broken = file(&server, "broken.creds", "nothing here\n");
    let err = connect(options(&url).credentials_file(&broken))
        .await
        .unwrap_err();
    assert_eq!(err.kind(), BuildErrorKind::Config);
    assert!(err.to_string().contains("broken.creds"), "{err}");
}
