package dev.waterline.load.clients;

import java.net.URI;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.MultiThreadIoEventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioIoHandler;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.http.DefaultHttpHeaders;
import io.netty.handler.codec.http.HttpClientCodec;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.websocketx.CloseWebSocketFrame;
import io.netty.handler.codec.http.websocketx.TextWebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketClientProtocolConfig;
import io.netty.handler.codec.http.websocketx.WebSocketClientProtocolHandler;
import io.netty.handler.codec.http.websocketx.WebSocketFrame;
import io.netty.handler.codec.http.websocketx.WebSocketFrameAggregator;
import io.netty.handler.codec.http.websocketx.WebSocketVersion;
import io.netty.handler.flush.FlushConsolidationHandler;

/**
 * {@link WsLink} over Netty: every client shares one event loop per core, and a send is queued
 * to its channel without waiting, so a frame costs no thread hand-off of its own. (The JDK client
 * hands each frame between its selector and executor threads; under load that, not the server,
 * was the generator's largest cost.)
 */
final class NettyWsLink implements WsLink {

    private final Channel channel;
    /** Closed by this side: what follows is not the server's verdict and is not reported. */
    private volatile boolean closing;

    private NettyWsLink(Channel channel) {
        this.channel = channel;
    }

    @Override
    public void send(String frame) throws Exception {
        if (!channel.isActive()) {
            throw new IllegalStateException("connection closed");
        }
        ChannelFuture written = channel.writeAndFlush(new TextWebSocketFrame(frame));
        if (channel.eventLoop().inEventLoop()) {
            return;
        }
        if (!channel.isWritable() && !written.await(10, TimeUnit.SECONDS)) {
            throw new IllegalStateException("write not done within 10 s");
        }
    }

    @Override
    public boolean trySendNow(String frame, Consumer<Boolean> done) {
        if (!channel.isActive() || !channel.isWritable()) {
            return false;
        }
        channel.writeAndFlush(new TextWebSocketFrame(frame)).addListener(f -> done.accept(f.isSuccess()));
        return true;
    }

    @Override
    public boolean writesOnReadComplete() {
        return true;
    }

    @Override
    public void pauseReading() {
        channel.config().setAutoRead(false);
    }

    @Override
    public void close(String reason) {
        closing = true;
        if (channel.isActive()) {
            channel.writeAndFlush(new CloseWebSocketFrame(1000, reason)).addListener(ChannelFutureListener.CLOSE);
        }
    }

    static final class Connector implements WsLink.Connector {
        private final EventLoopGroup group = new MultiThreadIoEventLoopGroup(
                Math.max(1, Runtime.getRuntime().availableProcessors()), NioIoHandler.newFactory());

        @Override
        public CompletableFuture<WsLink> connect(URI uri, String token, Events events) {
            CompletableFuture<WsLink> upgraded = new CompletableFuture<>();
            WebSocketClientProtocolConfig config = WebSocketClientProtocolConfig.newBuilder()
                    .webSocketUri(uri)
                    .version(WebSocketVersion.V13)
                    .customHeaders(new DefaultHttpHeaders().add("Authorization", "Bearer " + token))
                    .handleCloseFrames(false)
                    .maxFramePayloadLength(1 << 20)
                    .handshakeTimeoutMillis(15_000)
                    .build();
            new Bootstrap().group(group)
                    .channel(NioSocketChannel.class)
                    .option(ChannelOption.TCP_NODELAY, true)
                    .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, 10_000)
                    .handler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            ch.pipeline().addLast(
                                    new FlushConsolidationHandler(64, true),
                                    new HttpClientCodec(),
                                    new HttpObjectAggregator(64 * 1024),
                                    new WebSocketClientProtocolHandler(config),
                                    new WebSocketFrameAggregator(1 << 20),
                                    new Frames(events, upgraded));
                        }
                    })
                    .connect(uri.getHost(), uri.getPort())
                    .addListener((ChannelFuture f) -> {
                        if (!f.isSuccess()) {
                            upgraded.completeExceptionally(f.cause());
                        }
                    });
            return upgraded;
        }

        @Override
        public void close() {
            group.shutdownGracefully(0, 2, TimeUnit.SECONDS);
        }
    }

    /** Completes the connect future on the upgrade, then passes text frames and the close on. */
    private static final class Frames extends SimpleChannelInboundHandler<WebSocketFrame> {
        private final Events events;
        private final CompletableFuture<WsLink> upgraded;
        private final AtomicBoolean closed = new AtomicBoolean();
        private volatile NettyWsLink link;

        Frames(Events events, CompletableFuture<WsLink> upgraded) {
            this.events = events;
            this.upgraded = upgraded;
        }

        @Override
        public void userEventTriggered(ChannelHandlerContext ctx, Object evt) throws Exception {
            if (evt == WebSocketClientProtocolHandler.ClientHandshakeStateEvent.HANDSHAKE_COMPLETE) {
                link = new NettyWsLink(ctx.channel());
                upgraded.complete(link);
            }
            else if (evt == WebSocketClientProtocolHandler.ClientHandshakeStateEvent.HANDSHAKE_TIMEOUT) {
                upgraded.completeExceptionally(new IllegalStateException("WebSocket upgrade timed out"));
            }
            super.userEventTriggered(ctx, evt);
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, WebSocketFrame frame) {
            if (frame instanceof TextWebSocketFrame text) {
                events.onText(text.text());
            }
            else if (frame instanceof CloseWebSocketFrame close) {
                closed(close.statusCode() < 0 ? 1005 : close.statusCode());
                ctx.close();
            }
        }

        @Override
        public void channelReadComplete(ChannelHandlerContext ctx) throws Exception {
            events.onReadComplete();
            super.channelReadComplete(ctx);
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) throws Exception {
            upgraded.completeExceptionally(new IllegalStateException("connection closed before the upgrade"));
            closed(1006);
            super.channelInactive(ctx);
        }

        /** Anything the pipeline or a frame's handling throws closes the link (1006), and is said on stderr first. */
        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            if (link != null && !link.closing) {
                System.err.println("waterline-load: a WebSocket link closed on an error: " + cause);
            }
            upgraded.completeExceptionally(cause);
            ctx.close();
        }

        private void closed(int code) {
            NettyWsLink l = link;
            if (l != null && !l.closing && closed.compareAndSet(false, true)) {
                events.onClose(code);
            }
        }
    }
}
