// The reference for codecbus's event bus bridge: a Vert.x 3.9.4 node with
// the TCP event bus bridge and the SockJS bridge of vertx-web, listening on
// 127.0.0.1 at the ports given as arguments, and the consumers the bridge
// tests talk to. It prints {"tcp":PORT,"sockjs":PORT} on one line of stdout
// once both listen, logs to stderr, and exits when its stdin closes (the
// harness that started it holds the other end), so it never outlives the
// test that runs it.
//
//   java -cp <vertx/lib/*>:<classes> ReferenceBridge TCP_PORT SOCKJS_PORT
//
// Addresses (the permissions are the same on both bridges):
//
//   echo            in       replies with the body, the request's headers and
//                            a header "echoed": "true"
//   fail            in       fails the request with code 42, "it failed"
//   news            in, out  a publish target (the client may register it)
//   publish.trigger in       publishes {"from":"vertx","n":<body.n>} to news,
//                            with a header "origin": "vertx"
//   ask.client      in       body {"address": A, "body": B}: requests B at A
//                            (an address a bridge client registered) and
//                            replies with the answer's body, or fails with
//                            the answer's failure code and text
//   converse        in       replies {"ask":"and you?"} asking for an answer
//                            (replyAndRequest), then publishes to news
//                            {"heard": <the answer's body>}, or
//                            {"failed": <its failure code>}
//   converse.client in       body {"address": A, "body": B}: requests B at A
//                            (a client's address); when the answer asks for
//                            an answer of its own, gives it {"ok": true},
//                            asking in turn; replies {"reply": <the answer's
//                            body>, "asked": <whether it asked>, "last": <the
//                            answer to {"ok": true}>}
//   converse.turn   in       replies {"ask": <the body>} asking for an answer
//                            (replyAndRequest); an answer that asks in turn
//                            is answered {"heard": <its body>}; then
//                            publishes to news {"heard": <the answer's body>,
//                            "asked": <whether it asked>}, or {"failed": <its
//                            failure code>, "message": <its text>}
//   client.*        out      (regex) addresses bridge clients register
//   regex.echo      in       (regex ^regex\..+) an echo
//   match.echo      in       only bodies that contain {"action":"allowed"}
//   nobody          in       permitted, no consumer
//   secret          -        a consumer that nothing permits

import io.vertx.core.AbstractVerticle;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.eventbus.DeliveryOptions;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.eventbus.Message;
import io.vertx.core.eventbus.ReplyException;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.json.JsonObject;
import io.vertx.core.net.NetServerOptions;
import io.vertx.ext.bridge.BridgeOptions;
import io.vertx.ext.bridge.PermittedOptions;
import io.vertx.ext.eventbus.bridge.tcp.TcpEventBusBridge;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.handler.sockjs.SockJSBridgeOptions;
import io.vertx.ext.web.handler.sockjs.SockJSHandler;

import java.io.IOException;
import java.util.Map;

public final class ReferenceBridge extends AbstractVerticle {
    private static final String HOST = "127.0.0.1";

    private final int tcpPort;
    private final int sockjsPort;

    private ReferenceBridge(int tcpPort, int sockjsPort) {
        this.tcpPort = tcpPort;
        this.sockjsPort = sockjsPort;
    }

    public static void main(String[] args) {
        if (args.length != 2) {
            System.err.println("usage: ReferenceBridge TCP_PORT SOCKJS_PORT");
            System.exit(2);
        }
        watchStdin();
        int tcp = Integer.parseInt(args[0]);
        int sockjs = Integer.parseInt(args[1]);
        Vertx vertx = Vertx.vertx();
        vertx.deployVerticle(new ReferenceBridge(tcp, sockjs), new DeploymentOptions(), done -> {
            if (done.failed()) {
                System.err.println("ReferenceBridge: " + done.cause());
                Runtime.getRuntime().halt(1);
            }
            System.out.println(new JsonObject().put("tcp", tcp).put("sockjs", sockjs).encode());
            System.out.flush();
        });
    }

    // The process ends when its parent closes our stdin (or dies).
    private static void watchStdin() {
        Thread watcher = new Thread(() -> {
            try {
                while (System.in.read() != -1) {
                    // whatever comes is ignored; only the end matters
                }
            } catch (IOException ignored) {
                // a broken pipe ends us as an end of file does
            }
            Runtime.getRuntime().halt(0);
        }, "stdin-watcher");
        watcher.setDaemon(true);
        watcher.start();
    }

    private static PermittedOptions address(String address) {
        return new PermittedOptions().setAddress(address);
    }

    private static PermittedOptions regex(String regex) {
        return new PermittedOptions().setAddressRegex(regex);
    }

    @Override
    public void start(Promise<Void> started) {
        EventBus eb = vertx.eventBus();
        eb.<Object>consumer("echo", ReferenceBridge::echo);
        eb.<Object>consumer("regex.echo", ReferenceBridge::echo);
        eb.<Object>consumer("match.echo", ReferenceBridge::echo);
        eb.<Object>consumer("secret", ReferenceBridge::echo);
        eb.<Object>consumer("fail", m -> m.fail(42, "it failed"));
        eb.<JsonObject>consumer("publish.trigger", m -> {
            Object n = m.body() == null ? null : m.body().getValue("n");
            JsonObject news = new JsonObject().put("from", "vertx").put("n", n);
            eb.publish("news", news, new DeliveryOptions().addHeader("origin", "vertx"));
        });
        eb.<JsonObject>consumer("ask.client", m -> {
            String target = m.body().getString("address");
            Object body = m.body().getValue("body");
            eb.request(target, body, new DeliveryOptions().setSendTimeout(5000), answer -> {
                if (answer.succeeded()) {
                    m.reply(answer.result().body());
                } else if (answer.cause() instanceof ReplyException) {
                    ReplyException e = (ReplyException) answer.cause();
                    m.fail(e.failureCode(), e.getMessage());
                } else {
                    m.fail(-1, String.valueOf(answer.cause()));
                }
            });
        });

        eb.<Object>consumer("converse", m -> m.replyAndRequest(new JsonObject().put("ask", "and you?"), answer -> {
            JsonObject heard = new JsonObject();
            if (answer.succeeded()) {
                heard.put("heard", answer.result().body());
            } else if (answer.cause() instanceof ReplyException) {
                heard.put("failed", ((ReplyException) answer.cause()).failureCode());
            } else {
                heard.put("failed", String.valueOf(answer.cause()));
            }
            eb.publish("news", heard);
        }));

        eb.<JsonObject>consumer("converse.client", m -> {
            String target = m.body().getString("address");
            Object body = m.body().getValue("body");
            eb.request(target, body, new DeliveryOptions().setSendTimeout(5000), reply -> {
                if (reply.failed()) {
                    m.fail(-1, String.valueOf(reply.cause()));
                    return;
                }
                Message<Object> answer = reply.result();
                JsonObject said = new JsonObject().put("reply", answer.body());
                if (answer.replyAddress() == null) {
                    m.reply(said.put("asked", false));
                    return;
                }
                answer.replyAndRequest(new JsonObject().put("ok", true), last -> {
                    said.put("asked", true);
                    if (last.succeeded()) {
                        said.put("last", last.result().body());
                    } else {
                        said.put("last", String.valueOf(last.cause()));
                    }
                    m.reply(said);
                });
            });
        });

        eb.<Object>consumer("converse.turn", m -> m.replyAndRequest(new JsonObject().put("ask", m.body()), answer -> {
            JsonObject heard = new JsonObject();
            if (answer.succeeded()) {
                Message<Object> said = answer.result();
                boolean asked = said.replyAddress() != null;
                heard.put("heard", said.body()).put("asked", asked);
                if (asked) {
                    said.reply(new JsonObject().put("heard", said.body()));
                }
            } else if (answer.cause() instanceof ReplyException) {
                ReplyException e = (ReplyException) answer.cause();
                heard.put("failed", e.failureCode()).put("message", e.getMessage());
            } else {
                heard.put("failed", String.valueOf(answer.cause()));
            }
            eb.publish("news", heard);
        }));

        BridgeOptions tcpOptions = new BridgeOptions();
        SockJSBridgeOptions sockjsOptions = new SockJSBridgeOptions();
        for (PermittedOptions in : new PermittedOptions[] {
                address("echo"), address("fail"), address("news"), address("publish.trigger"),
                address("ask.client"), address("converse"), address("converse.client"),
                address("converse.turn"), regex("^regex\\..+"), address("nobody"),
                address("match.echo").setMatch(new JsonObject().put("action", "allowed"))}) {
            tcpOptions.addInboundPermitted(in);
            sockjsOptions.addInboundPermitted(new PermittedOptions(in));
        }
        for (PermittedOptions out : new PermittedOptions[] {address("news"), regex("^client\\..+")}) {
            tcpOptions.addOutboundPermitted(out);
            sockjsOptions.addOutboundPermitted(new PermittedOptions(out));
        }

        Router router = Router.router(vertx);
        router.mountSubRouter("/eventbus", SockJSHandler.create(vertx).bridge(sockjsOptions));

        TcpEventBusBridge.create(vertx, tcpOptions, new NetServerOptions().setHost(HOST))
            .listen(tcpPort, HOST, tcp -> {
                if (tcp.failed()) {
                    started.fail(tcp.cause());
                    return;
                }
                vertx.createHttpServer(new HttpServerOptions().setHost(HOST))
                    .requestHandler(router)
                    .listen(sockjsPort, HOST, http -> {
                        if (http.failed()) {
                            started.fail(http.cause());
                        } else {
                            started.complete();
                        }
                    });
            });
    }

    // Replies with the body and the request's headers, plus "echoed".
    private static void echo(Message<Object> m) {
        DeliveryOptions options = new DeliveryOptions();
        for (Map.Entry<String, String> h : m.headers().entries()) {
            options.addHeader(h.getKey(), h.getValue());
        }
        options.addHeader("echoed", "true");
        m.reply(m.body(), options);
    }
}
