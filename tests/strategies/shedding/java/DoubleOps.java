import java.io.BufferedReader;
import java.io.InputStreamReader;

/**
 * Plain JDK: for each line "id TAB a TAB b" (Double.parseDouble), prints
 * "id TAB bits(a / b) TAB bits(Math.max(a, b)) TAB bits(Math.min(a, b))" with
 * Double.doubleToLongBits (one NaN, -0.0 apart from 0.0).
 */
public class DoubleOps {
    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in));
        StringBuilder out = new StringBuilder();
        for (String line = in.readLine(); line != null; line = in.readLine()) {
            if (line.isEmpty()) {
                continue;
            }
            String[] f = line.split("\t");
            double a = Double.parseDouble(f[1]);
            double b = Double.parseDouble(f[2]);
            out.append(f[0]).append('\t').append(Double.doubleToLongBits(a / b))
                .append('\t').append(Double.doubleToLongBits(Math.max(a, b)))
                .append('\t').append(Double.doubleToLongBits(Math.min(a, b))).append('\n');
        }
        System.out.print(out);
    }
}
