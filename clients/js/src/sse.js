// Server-sent events read from a fetch() response body (a web ReadableStream, in browsers and in
// Node 20+ alike), so that the request can carry an Authorization header, which EventSource
// cannot, and so that Node needs no EventSource. Parses the text/event-stream format: fields
// id, event and data (several data lines joined by "\n"), comments skipped, a blank line ends
// an event; a final event without its blank line is dropped, as the format says.
export async function* readEventStream(body) {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let event = { id: null, event: 'message', data: [] };
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let newline;
      while ((newline = buffer.search(/\r\n|\r|\n/)) >= 0) {
        const line = buffer.slice(0, newline);
        const width = buffer.startsWith('\r\n', newline) ? 2 : 1;
        // a lone \r at the end of the buffer may be the first half of \r\n: wait for more
        if (width === 1 && buffer[newline] === '\r' && newline === buffer.length - 1) break;
        buffer = buffer.slice(newline + width);
        if (line === '') {
          if (event.data.length > 0) yield { id: event.id, event: event.event, data: event.data.join('\n') };
          event = { id: event.id, event: 'message', data: [] };
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon < 0 ? line : line.slice(0, colon);
        let value = colon < 0 ? '' : line.slice(colon + 1);
        if (value.startsWith(' ')) value = value.slice(1);
        if (field === 'data') event.data.push(value);
        else if (field === 'event') event.event = value;
        else if (field === 'id') event.id = value;
      }
    }
  } finally {
    reader.releaseLock?.();
  }
}
