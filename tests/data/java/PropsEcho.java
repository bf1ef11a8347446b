import java.io.ByteArrayInputStream;
import java.io.BufferedReader;
import java.io.FileDescriptor;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.util.Base64;
import java.util.Properties;

/**
 * The reference for tests/test_properties.py: reads one base64 properties file per stdin line,
 * loads it with java.util.Properties.load(InputStream) and prints "ok" and every key=value as
 * UTF-16 code units in hex, or "malformed" when load throws IllegalArgumentException.
 */
public class PropsEcho {
    public static void main(String[] args) throws IOException {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, "US-ASCII"));
        PrintStream out = new PrintStream(new FileOutputStream(FileDescriptor.out), true, "US-ASCII");
        String line;
        while ((line = in.readLine()) != null) {
            Properties p = new Properties();
            StringBuilder sb = new StringBuilder("ok");
            try {
                p.load(new ByteArrayInputStream(Base64.getDecoder().decode(line)));
                for (String k : p.stringPropertyNames()) {
                    sb.append(' ').append(hex(k)).append('=').append(hex(p.getProperty(k)));
                }
            } catch (IllegalArgumentException e) {
                sb.setLength(0);
                sb.append("malformed");
            }
            out.println(sb);
        }
    }

    static String hex(String s) {
        StringBuilder b = new StringBuilder("x");
        for (int i = 0; i < s.length(); i++) {
            b.append(String.format("%04x", (int) s.charAt(i)));
        }
        return b.toString();
    }
}
