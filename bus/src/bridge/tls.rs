//! The bridges over TLS: the TCP bridge's frames inside TLS, and the SockJS
//! bridge over HTTPS and WSS, with rustls; client certificates optional or
//! required, their chain handed to the event hook
//! ([`BridgeConnection::peer_certificates`](crate::bridge::BridgeConnection::peer_certificates)).

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio_rustls::TlsAcceptor;
use tokio_rustls::rustls::pki_types::pem::PemObject as _;
use tokio_rustls::rustls::pki_types::{CertificateDer, PrivateKeyDer};
use tokio_rustls::rustls::server::WebPkiClientVerifier;
use tokio_rustls::rustls::{RootCertStore, ServerConfig, crypto};
use tokio_rustls::server::TlsStream;

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

impl BridgeTls {
    /// The bridge's certificate chain (PEM, its own certificate first) and
    /// its private key (PEM: PKCS #8, PKCS #1 or SEC1).
    ///
    /// # Errors
    ///
    /// [`BridgeError::Tls`] when the PEM holds no certificate or no key.
    pub fn from_pem(chain: &[u8], key: &[u8]) -> Result<Self, BridgeError> {
        let chain = CertificateDer::pem_slice_iter(chain)
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| tls_error(format!("the certificate chain: {e}")))?;
        if chain.is_empty() {
            return Err(tls_error("the certificate chain holds no certificate"));
        }
        let key = PrivateKeyDer::from_pem_slice(key)
            .map_err(|e| tls_error(format!("the private key: {e}")))?;
        let tls = Self {
            chain,
            key: Arc::new(key),
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
        let mut roots = RootCertStore::empty();
        for cert in CertificateDer::pem_slice_iter(authorities) {
            let cert = cert.map_err(|e| tls_error(format!("the client authorities: {e}")))?;
            roots
                .add(cert)
                .map_err(|e| tls_error(format!("a client authority: {e}")))?;
        }
        if roots.is_empty() {
            return Err(tls_error("the client authorities hold no certificate"));
        }
        self.clients = Some((Arc::new(roots), required));
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
