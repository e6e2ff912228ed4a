//! The bridges over TLS: the TCP bridge's frames inside TLS, and the SockJS
//! bridge over HTTPS and WSS, with rustls, and `BridgeClient`'s connection
//! to a bridge over TLS; client certificates optional or required, their
//! chain handed to the event hook
//! ([`BridgeConnection::peer_certificates`](crate::bridge::BridgeConnection::peer_certificates)).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::TcpStream;
use tokio_rustls::rustls::pki_types::pem::PemObject as _;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer, ServerName};
use tokio_rustls::rustls::server::WebPkiClientVerifier;
use tokio_rustls::rustls::{ClientConfig, RootCertStore, ServerConfig, crypto};
use tokio_rustls::server::TlsStream;
use tokio_rustls::{TlsAcceptor, TlsConnector, client};

use crate::bridge::error::BridgeError;

/// A bridge's TLS: its certificate chain and key, and, when clients must
/// or may present one, the authorities their certificates are checked
/// against. Given to [`Bridge::listen_tls`](crate::bridge::Bridge::listen_tls)
/// or [`SockJsOptions::tls`](crate::bridge::SockJsOptions::tls).
///
/// # Examples
///
/// ```no_run
/// use codecbus_bus::bridge::BridgeTls;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let tls = BridgeTls::from_pem(
///     &std::fs::read("bridge.crt")?,
///     &std::fs::read("bridge.key")?,
/// )?
/// .client_certificates(&std::fs::read("clients-ca.crt")?, true)?;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct BridgeTls {
    chain: Vec<CertificateDer<'static>>,
    key: Arc<PrivateKeyDer<'static>>,
    clients: Option<(Arc<RootCertStore>, bool)>,
}

impl fmt::Debug for BridgeTls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BridgeTls")
            .field("chain", &self.chain.len())
            .field(
                "client_certificates",
                &self.clients.as_ref().map(
                    |(_, required)| {
                        if *required { "required" } else { "optional" }
                    },
                ),
            )
            .finish_non_exhaustive()
    }
}

fn tls_error(why: impl fmt::Display) -> BridgeError {
    BridgeError::Tls(why.to_string())
}

/// The certificates of `pem` as trusted authorities (`what` names them in
/// errors).
fn roots_of(pem: &[u8], what: &str) -> Result<Arc<RootCertStore>, BridgeError> {
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(pem) {
        let cert = cert.map_err(|e| tls_error(format!("{what}: {e}")))?;
        roots
            .add(cert)
            .map_err(|e| tls_error(format!("{what}: {e}")))?;
    }
    if roots.is_empty() {
        return Err(tls_error(format!("{what} hold no certificate")));
    }
    Ok(Arc::new(roots))
}

/// A certificate chain (PEM, its own certificate first) and its key (PEM).
type Identity = (Vec<CertificateDer<'static>>, Arc<PrivateKeyDer<'static>>);

fn identity_of(chain: &[u8], key: &[u8]) -> Result<Identity, BridgeError> {
    let chain = CertificateDer::pem_slice_iter(chain)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| tls_error(format!("the certificate chain: {e}")))?;
    if chain.is_empty() {
        return Err(tls_error("the certificate chain holds no certificate"));
    }
    let key = PrivateKeyDer::from_pem_slice(key)
        .map_err(|e| tls_error(format!("the private key: {e}")))?;
    Ok((chain, Arc::new(key)))
}

impl BridgeTls {
    /// The bridge's certificate chain (PEM, its own certificate first) and
    /// its private key (PEM: PKCS #8, PKCS #1 or SEC1).
    ///
    /// # Errors
    ///
    /// [`BridgeError::Tls`] when the PEM holds no certificate or no key.
    pub fn from_pem(chain: &[u8], key: &[u8]) -> Result<Self, BridgeError> {
        let (chain, key) = identity_of(chain, key)?;
        let tls = Self {
            chain,
            key,
            clients: None,
        };
        // Checked now: the key must be the certificate's.
        tls.config()?;
        Ok(tls)
    }

    /// Asks clients for a certificate issued by one of the authorities in
    /// `authorities` (PEM): `required`, a client without one is refused
    /// in the handshake; otherwise it may connect without one (and a
    /// certificate it does present must still be valid). The chain a
    /// client presented reaches the event hook.
    ///
    /// # Errors
    ///
    /// [`BridgeError::Tls`] when the PEM holds no usable certificate.
    pub fn client_certificates(
        mut self,
        authorities: &[u8],
        required: bool,
    ) -> Result<Self, BridgeError> {
        self.clients = Some((roots_of(authorities, "the client authorities")?, required));
        self.config()?;
        Ok(self)
    }

    /// The rustls configuration, with ring's cryptography.
    fn config(&self) -> Result<ServerConfig, BridgeError> {
        // ring is the project's one cryptography (async-nats's too); rustls
        // 0.23.48 deprecates this constructor for want of post-quantum key
        // exchange, which ring does not offer.
        #[allow(deprecated)]
        let provider = Arc::new(crypto::ring::default_provider());
        let builder = ServerConfig::builder_with_provider(Arc::clone(&provider))
            .with_safe_default_protocol_versions()
            .map_err(tls_error)?;
        let builder = match &self.clients {
            None => builder.with_no_client_auth(),
            Some((roots, required)) => {
                let verifier =
                    WebPkiClientVerifier::builder_with_provider(Arc::clone(roots), provider);
                let verifier = if *required {
                    verifier
                } else {
                    verifier.allow_unauthenticated()
                };
                builder.with_client_cert_verifier(verifier.build().map_err(tls_error)?)
            }
        };
        builder
            .with_single_cert(self.chain.clone(), self.key.clone_key())
            .map_err(tls_error)
    }

    /// What accepts connections with this TLS, HTTP/1.1 announced over
    /// ALPN when `http` (the SockJS bridge).
    pub(crate) fn acceptor(&self, http: bool) -> Result<Acceptor, BridgeError> {
        let mut config = self.config()?;
        if http {
            config.alpn_protocols = vec![b"http/1.1".to_vec()];
        }
        Ok(Acceptor(TlsAcceptor::from(Arc::new(config))))
    }
}

/// Accepts TLS connections.
#[derive(Clone)]
pub(crate) struct Acceptor(TlsAcceptor);

impl Acceptor {
    /// The handshake on `stream`, within `wait`, and the client's
    /// certificate chain (DER); `None`, logged, when it fails.
    pub(crate) async fn accept<S>(
        &self,
        stream: S,
        wait: Duration,
    ) -> Option<(TlsStream<S>, Vec<Vec<u8>>)>
    where
        S: AsyncRead + AsyncWrite + Unpin,
    {
        match tokio::time::timeout(wait, self.0.accept(stream)).await {
            Ok(Ok(tls)) => {
                let chain = tls
                    .get_ref()
                    .1
                    .peer_certificates()
                    .map(|chain| chain.iter().map(|c| c.as_ref().to_vec()).collect())
                    .unwrap_or_default();
                Some((tls, chain))
            }
            Ok(Err(e)) => {
                tracing::debug!(error = %e, "bridge TLS handshake failed");
                None
            }
            Err(_) => {
                tracing::debug!("bridge TLS handshake timed out");
                None
            }
        }
    }
}

/// A [`BridgeClient`](crate::bridge::BridgeClient)'s TLS: the authorities
/// the bridge's certificate is checked against, the client's own
/// certificate when the bridge asks for one, and the name the bridge's
/// certificate must bear (the host of the address connected to unless
/// set). Given to [`BridgeClientOptions::tls`](crate::bridge::BridgeClientOptions::tls).
///
/// # Examples
///
/// ```no_run
/// use codecbus_bus::bridge::BridgeClientTls;
///
/// # fn main() -> Result<(), Box<dyn std::error::Error>> {
/// let tls = BridgeClientTls::from_pem(&std::fs::read("bridges-ca.crt")?)?
///     .client_certificate(&std::fs::read("node.crt")?, &std::fs::read("node.key")?)?;
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct BridgeClientTls {
    roots: Arc<RootCertStore>,
    identity: Option<Identity>,
    server_name: Option<String>,
}

impl fmt::Debug for BridgeClientTls {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BridgeClientTls")
            .field("authorities", &self.roots.len())
            .field("client_certificate", &self.identity.is_some())
            .field("server_name", &self.server_name)
            .finish()
    }
}

impl BridgeClientTls {
    /// Trusts the authorities in `authorities` (PEM) for the bridge's
    /// certificate.
    ///
    /// # Errors
    ///
    /// [`BridgeError::Tls`] when the PEM holds no usable certificate.
    pub fn from_pem(authorities: &[u8]) -> Result<Self, BridgeError> {
        let tls = Self {
            roots: roots_of(authorities, "the authorities")?,
            identity: None,
            server_name: None,
        };
        tls.config()?;
        Ok(tls)
    }

    /// Presents `chain` (PEM, its own certificate first) with `key` (PEM)
    /// when the bridge asks for a client certificate.
    ///
    /// # Errors
    ///
    /// [`BridgeError::Tls`] when the PEM holds no certificate or no key, or
    /// the key is not the certificate's.
    pub fn client_certificate(mut self, chain: &[u8], key: &[u8]) -> Result<Self, BridgeError> {
        self.identity = Some(identity_of(chain, key)?);
        self.config()?;
        Ok(self)
    }

    /// The name the bridge's certificate must bear, when it is not the host
    /// of the address connected to.
    #[must_use]
    pub fn server_name(mut self, name: impl Into<String>) -> Self {
        self.server_name = Some(name.into());
        self
    }

    fn config(&self) -> Result<ClientConfig, BridgeError> {
        // ring, as the bridge's (see `BridgeTls::config`).
        #[allow(deprecated)]
        let provider = Arc::new(crypto::ring::default_provider());
        let builder = ClientConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .map_err(tls_error)?
            .with_root_certificates(Arc::clone(&self.roots));
        match &self.identity {
            None => Ok(builder.with_no_client_auth()),
            Some((chain, key)) => builder
                .with_client_auth_cert(chain.clone(), key.clone_key())
                .map_err(tls_error),
        }
    }

    /// TLS over `stream`, to the bridge at `peer` (`host:port`).
    pub(crate) async fn connect(
        &self,
        peer: &str,
        stream: TcpStream,
    ) -> std::io::Result<client::TlsStream<TcpStream>> {
        let config = self.config().map_err(std::io::Error::other)?;
        let host = match &self.server_name {
            Some(name) => name.clone(),
            None => peer
                .rsplit_once(':')
                .map_or(peer, |(host, _)| host)
                .trim_start_matches('[')
                .trim_end_matches(']')
                .to_owned(),
        };
        let name = ServerName::try_from(host)
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidInput, e))?;
        TlsConnector::from(Arc::new(config))
            .connect(name, stream)
            .await
    }
}
